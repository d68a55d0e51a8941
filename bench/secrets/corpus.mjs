// The secrets corpus (issue 21): realistic-looking fake secrets of many kinds and look-alikes that
// are not secrets. Everything is generated from fixed seeds (bench/prng.mjs), so the corpus is the
// same on every run and no real credential is ever written down. Prefixes are assembled from
// pieces so that secret scanners run over this repository do not flag the file.
import { prng } from "../prng.mjs";

const j = (...parts) => parts.join("");
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;
const B64 = ALNUM + "+/";
const B64URL = ALNUM + "-_";
const HEX = "0123456789abcdef";

function gen(rand) {
  const pick = (arr) => arr[Math.floor(rand() * arr.length)];
  /** Random string over `alphabet`; retried until it has upper, lower and digit when `mixed`. */
  const str = (alphabet, n, mixed = true) => {
    for (;;) {
      let s = "";
      for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
      if (!mixed || (/[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s))) return s;
    }
  };
  return { pick, str, int: (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)) };
}

const b64url = (s) => Buffer.from(s).toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/**
 * Secret samples: `{ kind, secret, text }`. `kind` is the detector kind expected to name it,
 * `secret` the sensitive value (no substring of it may survive redaction), `text` the value in a
 * realistic context (a shell line, a config file, a log line, prose).
 */
export function secretSamples(seed = 2101) {
  const rand = prng(seed);
  const { pick, str, int } = gen(rand);
  const out = [];
  const add = (kind, secret, contexts) => {
    for (const ctx of contexts) out.push({ kind, secret, text: ctx(secret) });
  };
  for (let i = 0; i < 3; i++) {
    add("aws_access_key", j("AK", "IA") + str(UPPER + DIGITS, 16, false), [(s) => `aws_access_key_id = ${s}`, (s) => `export AWS_ACCESS_KEY_ID=${s} before deploying`]);
    add("aws_secret_key", str(B64, 40), [(s) => `aws_secret_access_key = ${s}`, (s) => `the AWS secret is ${s} (rotate monthly)`]);
    add("github_pat", j("gh", "p_") + str(ALNUM, 36), [(s) => `git clone https://github.com/acme/app.git # token ${s}`, (s) => `GH_AUTH=${s}`]);
    add("github_token", pick(["gho_", "ghu_", "ghs_", "ghr_"]) + str(ALNUM, 36), [(s) => `oauth: ${s}`]);
    add("github_fine_grained_pat", j("github", "_pat_") + str(ALNUM, 22) + "_" + str(ALNUM, 59), [(s) => `use ${s} for the CI bot`]);
    add("npm_token", j("np", "m_") + str(ALNUM, 36), [(s) => `//registry.npmjs.org/:_authToken=${s}`, (s) => `publish failed with ${s} in .npmrc`]);
    add("openai_key", j("s", "k-") + str(ALNUM, 48), [(s) => `OPENAI_API_KEY=${s}`]);
    add("openai_key", j("s", "k-", "proj-") + str(B64URL, 74) + "T3BlbkFJ" + str(B64URL, 74), [(s) => `client = OpenAI(api_key="${s}")`, (s) => `curl -H "x-key: ${s}" https://api.example.test`]);
    add("anthropic_key", j("s", "k-ant-", "api03-") + str(B64URL, 93) + "AA", [(s) => `ANTHROPIC_API_KEY=${s}`, (s) => `ran claude with ${s}`]);
    add("slack_token", j("xo", "x") + pick(["b", "p", "a"]) + "-" + str(DIGITS, 12, false) + "-" + str(DIGITS, 13, false) + "-" + str(ALNUM, 24), [(s) => `SLACK_BOT=${s}`, (s) => `posting with ${s}`]);
    add("slack_webhook", `https://${j("hooks", ".slack", ".com")}/services/T${str(UPPER + DIGITS, 10, false)}/B${str(UPPER + DIGITS, 10, false)}/${str(ALNUM, 24)}`, [(s) => `webhook_url: ${s}`]);
    add("stripe_key", pick(["sk_live_", "rk_live_", "pk_live_"]) + str(ALNUM, pick([24, 99])), [(s) => `Stripe.apiKey = "${s}";`, (s) => `charge created using ${s}`]);
    add("google_api_key", j("AI", "za") + str(B64URL, 35), [(s) => `maps?key=${s}&callback=init`, (s) => `GOOGLE_KEY: ${s}`]);
    const header = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
    const payload = b64url(JSON.stringify({ sub: String(int(1000, 99999)), name: pick(["Ada", "Linus", "Grace"]), iat: 1700000000 + int(0, 9999999) }));
    add("jwt", `${header}.${payload}.${str(B64URL, 43)}`, [(s) => `cookie session=${s}; Path=/`, (s) => `decoded ${s} and got the user id`]);
    const pass = str(ALNUM + "!#%^*", int(10, 20));
    add("url_credentials", pass, [(s) => `DATABASE_URL=postgres://app_user:${s}@db.internal:5432/app`, (s) => `git remote add origin https://deploy:${s}@git.example.test/acme/app.git`, (s) => `redis://:${s}@cache.local:6379/0`]);
    const body = Array.from({ length: 6 }, () => str(B64, 64)).join("\n");
    const pemType = pick(["RSA ", "EC ", "OPENSSH ", ""]);
    add("private_key", body, [(s) => `-----BEGIN ${pemType}${j("PRIVATE", " KEY")}-----\n${s}\n-----END ${pemType}${j("PRIVATE", " KEY")}-----`]);
    add("authorization_header", Buffer.from(`admin:${str(ALNUM, 14)}`).toString("base64"), [(s) => `Authorization: Basic ${s}`]);
    add("bearer_token", str(B64URL, int(32, 48)), [(s) => `curl -H "Authorization: Bearer ${s}" https://api.example.test/v1`, (s) => `sent Bearer ${s} to the gateway`]);
    add("secret_assignment", str(ALNUM + "!@#$%", int(12, 24)), [
      (s) => `POSTGRES_PASSWORD=${s}`,
      (s) => `{"client_secret": "${s}", "client_id": "web"}`,
      (s) => `db:\n  password: ${s}\n  host: localhost`,
    ]);
    add("high_entropy", str(ALNUM, 32), [(s) => `the deploy secret ${s} is in the vault`]);
  }
  return out;
}

/** Look-alikes: strings that look like secrets to a naive scanner but are not. */
export function lookAlikes(seed = 2102) {
  const rand = prng(seed);
  const { pick, str, int } = gen(rand);
  const out = [];
  const add = (kind, text) => out.push({ kind, text });
  for (let i = 0; i < 20; i++) {
    const sha = str(HEX, 40, false);
    add("git_sha", pick([`commit ${sha}`, `fixed the secret rotation bug in ${sha}`, `git checkout ${sha} -- src/auth/token.ts`, `Merge: ${sha.slice(0, 7)} ${str(HEX, 7, false)}`]));
    const uuid = [8, 4, 4, 4, 12].map((n) => str(HEX, n, false)).join("-");
    add("uuid", pick([`request id ${uuid}`, `"id": "${uuid}"`, `session ${uuid} token refresh failed`, `api key id: ${uuid}`]));
    add("base64_test_data", pick([
      `expect(decode("${Buffer.from(`hello world ${i} from the test suite`).toString("base64")}")).toBe(true)`,
      `data:image/png;base64,${str(B64, 64)}`,
      `const fixture = "${Buffer.from(`{"user":"test","n":${i}}`).toString("base64")}";`,
    ]));
    add("long_identifier", pick([
      `function createAuthenticationTokenRefreshHandler${i}() {}`,
      `const passwordResetEmailTemplateRenderer = new Renderer();`,
      `import { SecretManagerServiceClient } from "@google-cloud/secret-manager";`,
      `token_refresh_interval_seconds_default_${i}`,
      `class ApiKeyValidationMiddlewareFactory {}`,
    ]));
    add("lockfile_hash", pick([
      `integrity sha512-${str(B64, 86)}==`,
      `"integrity": "sha1-${str(B64, 27)}="`,
      `resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.${i}.tgz#${str(HEX, 40, false)}"`,
      `checksum: ${str(HEX, 64, false)}`,
    ]));
    add("url_without_credentials", pick([
      `https://github.com/acme/app/pull/${int(1, 9999)}`,
      `postgres://db.internal:5432/app_${i}`,
      `https://example.com:8443/api/v1/tokens?page=${i}`,
      `git@github.com:acme/app.git`,
      `mailto:ops+${i}@example.com`,
      `https://docs.example.com/auth#password-reset`,
    ]));
    add("code", pick([
      `password: string;`,
      `token: z.string().min(1),`,
      `const secret = process.env.APP_SECRET;`,
      `api_key = os.environ["API_KEY"]`,
      `max_tokens=${int(256, 8192)}`,
      `tokenizer: cl100k_base`,
      `if (!password) throw new Error("password required");`,
      `headers: { Authorization: \`Bearer \${token}\` }`,
      `credentials: "same-origin",`,
    ]));
    add("placeholder", pick([
      `OPENAI_API_KEY=<API_KEY>`,
      `export GITHUB_TOKEN=\${GITHUB_TOKEN}`,
      `password: "********"`,
      `api_key: your-api-key-here`,
      `DB_PASSWORD=changeme`,
      `token: "[REDACTED]"`,
      `secret: {{ secrets.DEPLOY_KEY }}`,
    ]));
    add("prose", pick([
      "The tokenizer splits text into tokens",
      "Bearer of bad news: the build is red again",
      "This is a password-protected file",
      "The API key concept is important",
      "Rotate the secret before the token expires, then update the key in the vault",
      "Never commit a private key; use the secret manager instead",
      `Use sk-learn pipelines (scikit) for feature ${i}`,
    ]));
    add("hashes_and_ids", pick([
      `docker pull node@sha256:${str(HEX, 64, false)}`,
      `md5 ${str(HEX, 32, false)}  package.tgz`,
      `ETag: "${str(HEX, 32, false)}"`,
      `trace_id=${str(HEX, 32, false)} span_id=${str(HEX, 16, false)}`,
      `build ${int(1000, 9999)}-${str(LOWER + DIGITS, 8, false)} passed`,
      `#${str(HEX, 6, false)} is the brand colour`,
    ]));
  }
  return out;
}
