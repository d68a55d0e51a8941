/**
 * Coding-domain concept map: groups of phrasings that name the same problem or idea, so that a
 * task written in one vocabulary finds a rule written in another ("everyone got logged out after
 * the deploy" ↔ "keep the cookie-signing secret stable"; "flaky" ↔ "intermittent"; "OOMKilled" ↔
 * "memory leak"). It is reviewed data, not code: each group should read as "these phrasings are
 * about the same thing" to an experienced engineer, across languages and stacks, independent of
 * any particular rule or task.
 *
 * How it is used (concept-match.ts): phrases are analysed like any text (identifier splitting,
 * stemming, stop words dropped) and matched as contiguous term sequences, longest match first;
 * every match adds the group as an extra pseudo-term to the rule or the task. A task and a rule
 * that mention the same group therefore share a term, scored with BM25F like words but with a
 * reduced weight (QueryParams.expansionWeight, 0.8 of a word), so literal matches still count most.
 *
 * Rules for editing (concepts.test.ts checks the mechanical ones):
 * - A phrase must still mean the group's idea out of context. Single words that are common in
 *   other senses (session, token, key, lock, hook, index, worker, cache…) belong here only inside
 *   longer phrases. Remember that stop words vanish and words are stemmed: "another user" is just
 *   "user", "validation" is "valid", "profiling" is "profil" like "profile".
 * - Symptoms and their usual causes/fixes may share a group (that is the point: "signed out after
 *   every deploy" and "session secret regenerated on start" are the same problem).
 * - Do not add wording to make one benchmark task pass; add phrasings people actually use.
 */

export interface ConceptGroup {
  /** Stable identifier (kebab-case). */
  readonly id: string;
  /** What the phrasings have in common. */
  readonly about: string;
  readonly phrases: readonly string[];
}

export const CONCEPT_GROUPS: readonly ConceptGroup[] = [
  // ---------------------------------------------------------------------------------------------
  // Authentication, sessions, secrets
  {
    id: "session-loss",
    about: "users lose their login: logged out unexpectedly, after deploys or restarts, or between servers",
    phrases: [
      "logged out", "logs out", "log out", "logging out", "signed out", "sign out", "kicked out", "logged off",
      "log in again", "login again", "logged in again", "sign in again", "signed in again", "re-login", "relogin", "re-authenticate",
      "reauthenticate", "session expired", "sessions expire", "session lost", "lost session", "lost their session",
      "session invalidated", "sessions invalidated", "session cookie", "session cookies", "session secret",
      "cookie secret", "signing secret", "cookie-signing secret", "secret key base", "secret_key_base",
      "in-memory session", "in-memory sessions", "session store", "sticky sessions",
      "forgets the login", "back to the login page", "redirected to login",
      "password again",
    ],
  },
  {
    id: "unauthenticated",
    about: "requests rejected as not authenticated: 401, expired or not-yet-valid tokens",
    phrases: [
      "401", "401s", "unauthorized", "unauthenticated", "invalid token", "token expired",
      "expired token", "token not yet valid", "jwt expired", "invalid signature", "clock skew", "clock drift",
      "clocks drift", "nbf", "exp claim",
    ],
  },
  {
    id: "forbidden",
    about: "authenticated but not allowed: 403, permission denied",
    phrases: ["403", "forbidden", "permission denied", "access denied", "insufficient permissions", "eacces", "eperm"],
  },
  {
    id: "cross-account-access",
    about: "a user can see or change another user's or tenant's records (IDOR, missing object-level checks)",
    phrases: [
      "idor", "insecure direct object reference",
     
      "cross-tenant", "tenant isolation", "another user's data", "other people's data", "stranger", "strangers", "object-level authorization",
      "authorization check", "scoped to the current user", "changing the id", "change the id",
    ],
  },
  {
    id: "credential",
    about: "secrets and credentials in general",
    phrases: [
      "credential", "credentials", "secret", "secrets", "api key", "api keys", "access key", "access keys",
      "service account key", "private key", "passwords", "password", "client secret",
    ],
  },
  {
    id: "credential-exposure",
    about: "a secret leaked, was stolen or exposed",
    phrases: [
      "leaked secret", "leaked secrets", "leaked credential", "leaked credentials", "leaked key", "leaked token",
      "leaked password", "exposed secret", "exposed secrets", "exposed credentials", "credential leak",
      "exfiltrate", "exfiltrated", "exfiltration", "stolen", "stole", "steal", "compromised", "secret committed",
      "committed a secret", "pushed a secret", "gitleaks", "trufflehog",
    ],
  },
  {
    id: "secret-rotation",
    about: "rotating keys and secrets without breaking clients",
    phrases: ["rotate", "rotated", "rotating", "rotation", "key rotation", "secret rotation", "revoke", "revoked", "revocation"],
  },
  {
    id: "brute-force",
    about: "guessing passwords or codes; login throttling",
    phrases: [
      "brute force", "brute-force", "credential stuffing", "password guessing", "guess passwords", "guessing codes",
      "login attempts", "failed logins", "too many attempts", "account lockout", "lockout", "one-time code", "otp",
      "2fa code", "verification code",
    ],
  },
  {
    id: "password-storage",
    about: "how passwords are hashed and stored",
    phrases: ["password hashing", "hash passwords", "hashed passwords", "plaintext passwords", "bcrypt", "argon2", "argon2id", "scrypt", "pbkdf2", "md5", "sha1"],
  },
  {
    id: "jwt",
    about: "JSON web tokens and bearer tokens",
    phrases: ["jwt", "jwts", "json web token", "bearer token", "access token", "access tokens", "id token"],
  },
  {
    id: "oauth",
    about: "OAuth / OpenID Connect login flows",
    phrases: ["oauth", "oauth2", "openid", "openid connect", "sso", "single sign-on", "social login", "login with google", "authorization code", "pkce", "consent screen"],
  },
  {
    id: "browser-token-storage",
    about: "where a browser or app keeps credentials",
    phrases: ["localstorage", "local storage", "sessionstorage", "session storage", "asyncstorage", "keychain", "keystore", "secure storage", "httponly cookie", "httponly"],
  },
  {
    id: "proxy-https",
    about: "apps behind TLS-terminating proxies or load balancers that misjudge the scheme or client",
    phrases: [
      "behind a proxy", "behind the proxy", "behind a load balancer", "behind the load balancer", "reverse proxy",
      "tls termination", "terminates tls", "x-forwarded-proto", "x-forwarded-for", "trust proxy", "secure cookie",
      "secure cookies", "works on localhost",
    ],
  },
  {
    id: "csrf",
    about: "cross-site request forgery",
    phrases: ["csrf", "xsrf", "cross-site request forgery", "forged request", "samesite", "csrf token"],
  },
  {
    id: "xss",
    about: "script injection into pages",
    phrases: [
      "xss", "cross-site scripting", "script injection", "injected script", "innerhtml", "dangerouslySetInnerHTML",
      "user html", "user-provided html", "untrusted html", "sanitize html", "sanitise html", "rich text", "dompurify",
      "content-security-policy", "csp",
    ],
  },
  {
    id: "sql-injection",
    about: "building SQL from user input",
    phrases: [
      "sql injection", "sqli", "string concatenation", "concatenated sql", "concatenate sql", "string interpolation in sql",
      "bind parameters", "bind parameter", "parameterized", "parameterised", "prepared statement", "prepared statements",
    ],
  },
  {
    id: "ssrf",
    about: "the server fetches attacker-chosen URLs",
    phrases: [
      "ssrf", "server-side request forgery", "169.254.169.254", "metadata endpoint", "instance metadata",
      "metadata service", "link preview", "link previews", "user-supplied url", "user-supplied urls", "fetch any url",
      "internal addresses", "private addresses",
    ],
  },
  {
    id: "open-redirect",
    about: "redirecting to attacker-chosen targets",
    phrases: ["open redirect", "redirect url", "redirect_uri", "returnto", "return url", "next parameter", "phishing"],
  },
  {
    id: "cors",
    about: "cross-origin browser requests",
    phrases: ["cors", "cross-origin", "access-control-allow-origin", "access-control-allow-credentials", "preflight", "blocked by cors policy", "allowed origins"],
  },
  {
    id: "webhook-verification",
    about: "verifying who sent a webhook",
    phrases: ["webhook signature", "webhook signatures", "signature verification", "verify signature", "hmac", "stripe-signature", "replay attack", "replay attacks",],
  },
  {
    id: "timing-attack",
    about: "comparing secrets in variable time",
    phrases: ["timing attack", "timing attacks", "constant-time", "constant time comparison", "timingsafeequal", "compare_digest"],
  },
  {
    id: "encryption-at-rest",
    about: "encrypting stored data and managing keys",
    phrases: ["encryption at rest", "encrypt data", "encrypted columns", "kms", "envelope encryption", "data key", "master key", "key management"],
  },
  {
    id: "supply-chain",
    about: "compromised dependencies, actions and publishing",
    phrases: [
      "supply chain", "supply-chain", "compromised dependency", "malicious package", "typosquatting", "provenance",
      "sbom", "third-party action", "third-party actions", "pin to a sha", "commit sha",
    ],
  },
  {
    id: "vulnerability-scanning",
    about: "known vulnerabilities in dependencies",
    phrases: ["vulnerability", "vulnerabilities", "cve", "cves", "npm audit", "pip-audit", "security advisory", "dependabot", "snyk", "osv-scanner"],
  },
  {
    id: "untrusted-fork",
    about: "code from outside contributors running with privileges",
    phrases: [
      "fork", "forks", "forked repository", "from a fork", "external contributor", "external contributors",
      "outside contributor", "outside contributors", "contributor", "contributors", "untrusted pull request",
      "pull_request_target",
    ],
  },

  // ---------------------------------------------------------------------------------------------
  // Reliability, performance, resources
  {
    id: "out-of-memory",
    about: "processes running out of memory, memory leaks and unbounded growth",
    phrases: [
      "out of memory", "ran out of memory", "runs out of memory", "run out of memory", "oom", "oomkilled",
      "oom killed", "oom-killed", "oom killer", "memory leak", "memory leaks", "leaks memory", "leaking memory",
      "heap out of memory", "javascript heap out of memory", "heap limit", "reached heap limit", "heap snapshot",
      "heap snapshots", "heap usage", "memory usage", "memory grows", "memory keeps growing", "memory climbs",
      "growing memory", "exit code 137", "max-old-space-size", "allocation failure", "rss", "unbounded cache", "unbounded map", "no eviction", "without eviction", "grows without bound", "unbounded growth",
      "memory limit",
    ],
  },
  {
    id: "memory",
    about: "memory under its other names",
    phrases: ["memory", "ram", "heap"],
  },
  {
    id: "flaky",
    about: "tests or jobs that fail only sometimes",
    phrases: [
      "flaky", "flakey", "flakiness", "flake", "flakes", "intermittent", "intermittently", "sporadic", "sporadically",
      "randomly fails", "fails randomly", "random failures", "sometimes fails", "fails sometimes", "nondeterministic",
      "non-deterministic", "passes on retry", "timing-dependent",
    ],
  },
  {
    id: "environment-difference",
    about: "works in one environment, fails in another",
    phrases: [
      "works on my machine", "works locally", "passes locally", "fails in ci",
      "only fails in ci",
      "differs between machines",
    ],
  },
  {
    id: "concurrency",
    about: "things happening at the same time and interfering",
    phrases: [
      "race condition", "race conditions", "data race", "racy", "concurrent", "concurrently", "simultaneous",
      "simultaneously", "in parallel", "overlapping",
    ],
  },
  {
    id: "out-of-order-responses",
    about: "an older async result overwrites a newer one",
    phrases: [
      "out of order", "out-of-order", "older response", "stale response", "earlier request", "previous request",
      "slow earlier response", "abort the previous request", "cancel the previous request", "abortcontroller",
      "last write wins", "race condition",
    ],
  },
  {
    id: "deadlock",
    about: "things waiting on each other forever",
    phrases: ["deadlock", "deadlocks", "deadlocked", "deadlock detected", "lock ordering", "lock order", "all goroutines are asleep"],
  },
  {
    id: "lock-contention",
    about: "work queued behind a held lock",
    phrases: [
      "lock contention", "waiting on a lock", "waiting for a lock", "waiting on lock", "lock wait", "blocked by a lock",
      "holds a lock", "holding locks", "table lock", "locked the table", "locks the table", "access exclusive",
      "blocks writes", "blocked writes", "lock_timeout", "lock timeout", "lock queue",
    ],
  },
  {
    id: "hang",
    about: "something stops making progress",
    phrases: [
      "hang", "hangs", "hung", "hanging", "stuck", "freezes", "frozen", "unresponsive", "stops responding",
      "stopped responding", "waits forever", "blocked forever",
    ],
  },
  {
    id: "timeout",
    about: "operations exceeding time limits",
    phrases: [
      "timeout", "timeouts", "timed out", "times out", "time out", "deadline exceeded", "etimedout", "no timeout",
      "request timeout", "took too long",
    ],
  },
  {
    id: "latency",
    about: "slowness as users experience it",
    phrases: [
      "latency", "slow", "slowness", "sluggish", "takes forever", "response time", "response times",
      "p95", "p99", "tail latency", "slow response", "slow responses", "slow page", "slow pages",
    ],
  },
  {
    id: "blocking-work",
    about: "CPU-heavy or synchronous work blocking a loop or thread that serves others",
    phrases: [
      "event loop", "blocks the event loop", "blocking the event loop", "blocked event loop", "blocking call",
      "blocking calls", "blocking io", "synchronous work", "cpu-heavy", "cpu heavy", "cpu-bound", "cpu bound",
      "cpu-intensive", "cpu intensive", "heavy computation", "expensive computation", "main thread",
      "worker_threads", "worker threads", "run_in_executor", "spawn_blocking", "offload",
    ],
  },
  {
    id: "ui-lag",
    about: "interfaces that stutter or lag",
    phrases: ["lag", "laggy", "lags", "janky", "jank", "stutter", "stutters", "typing lag", "scrolling lag", "slow typing", "scroll performance", "dropped frames"],
  },
  {
    id: "duplicate-processing",
    about: "the same work, message or request processed more than once",
    phrases: [
      "duplicate", "duplicates", "duplicated", "twice", "double", "doubled", "double charge", "double charged",
      "charged twice", "charged double", "processed twice", "ran twice", "runs twice", "run twice", "ran again",
      "runs again", "run again", "two identical", "idempotent", "idempotency", "idempotency key", "deduplicate",
      "deduplication", "dedupe", "at-least-once", "exactly-once",
      "redelivered", "redelivery", "delivered again", "processed again", "re-sent", "resent", "resend", "resubmitted",
    ],
  },
  {
    id: "retries",
    about: "retrying failed calls",
    phrases: ["retry", "retries", "retried", "retrying", "backoff", "back off", "exponential backoff", "jitter", "retry-after", "retry storm"],
  },
  {
    id: "rate-limit",
    about: "limits on request rates",
    phrases: [
      "rate limit", "rate limits", "rate limiting", "rate-limit", "rate-limited", "ratelimit", "throttle", "throttled",
      "throttling", "429", "too many requests", "quota", "quotas", "token bucket", "leaky bucket", "sliding window",
    ],
  },
  {
    id: "scheduled-jobs",
    about: "periodic jobs",
    phrases: [
      "cron", "cronjob", "cron job", "cron jobs", "crontab", "scheduled job", "scheduled jobs", "scheduled task",
      "scheduled tasks", "periodic job", "periodic task", "hourly", "nightly",
     
    ],
  },
  {
    id: "job-overlap",
    about: "a periodic job starting again while the previous run is still going",
    phrases: [
      "previous run", "runs overlap", "overlapping runs", "concurrent runs",
      "concurrencypolicy", "single instance", "only one instance", "advisory lock",
     
    ],
  },
  {
    id: "distributed-lock",
    about: "mutual exclusion across processes or machines",
    phrases: [
      "distributed lock", "distributed locks", "redlock", "setnx", "lock expires", "lease", "leases",
      "fencing token", "fencing tokens", "advisory lock", "pg_advisory_lock", "mutual exclusion", "leader election",
    ],
  },
  {
    id: "cache-stampede",
    about: "many requests recomputing the same expired cache entry",
    phrases: ["cache stampede", "thundering herd", "dogpile", "cache expiry", "cache expires", "popular key expires", "single-flight", "singleflight", "request coalescing"],
  },
  {
    id: "stale-data",
    about: "people see old data after it changed",
    phrases: [
      "stale data", "stale cache", "stale value", "outdated data", "old data", "out of date", "outdated",
      "shows old", "previous value",
      "cache invalidation", "invalidate the cache entry", "invalidate the cache",
    ],
  },
  {
    id: "stale-client-version",
    about: "browsers or apps keep running an old frontend version after a deploy",
    phrases: [
      "old version", "old versions", "previous version", "old frontend",
      "old app shell", "stale assets", "stale bundle", "hard refresh", "hard reload", "cache busting",
      "cache-busting", "content hash", "content-hashed", "service worker", "service workers", "cache-control",
      "immutable assets",
    ],
  },
  {
    id: "resource-leak",
    about: "handles, sockets or connections never released",
    phrases: [
      "leak", "leaks", "leaking", "file descriptors", "too many open files", "emfile", "socket leak", "leaked sockets",
      "connection leak", "leaked connections",
    ],
  },
  {
    id: "connection-pool-exhaustion",
    about: "running out of database connections",
    phrases: [
      "too many clients", "too many clients already", "too many connections", "max_connections", "connection limit",
      "connection pool", "pool exhausted", "pool size", "pool runs dry", "waiting for a connection",
      "free connection", "free database connection", "remaining connection slots", "pgbouncer", "connection pooler",
      "connection leak", "connections checked out",
    ],
  },
  {
    id: "instances",
    about: "several copies of a service",
    phrases: [
      "replica", "replicas", "replica count", "application instances", "many instances", "pods",
      "horizontal scaling", "scale out", "scaled out", "scale up",
    ],
  },
  {
    id: "crash",
    about: "a process dying",
    phrases: [
      "crash", "crashes", "crashed", "crashing", "dies", "died", "segfault", "panic", "panics", "panicked",
      "fatal error", "exits immediately", "exited with code", "core dump",
    ],
  },
  {
    id: "restart-loop",
    about: "containers restarting again and again",
    phrases: [
      "crashloopbackoff", "crash loop", "crashloop", "keeps restarting", "restart loop", "restarting", "restarts",
      "recreated",
    ],
  },
  {
    id: "health-checks",
    about: "probes and health endpoints",
    phrases: [
      "liveness probe", "liveness probes", "readiness probe", "readiness probes", "probe", "probes", "health check", "health checks",
      "healthcheck", "healthz", "readyz", "health endpoint", "health endpoints",
    ],
  },
  {
    id: "dependency-unavailable",
    about: "a dependency (usually the database) briefly unreachable",
    phrases: [
      "database down", "database is down", "database unavailable", "database unreachable", "db down",
      "unreachable", "connection refused", "econnrefused", "cannot connect", "hiccup",
      "briefly unavailable", "blip",
    ],
  },
  {
    id: "cascading-failure",
    about: "a small fault turning into a wide outage",
    phrases: ["cascading failure", "cascading failures", "outage", "retry storm", "brownout"],
  },
  {
    id: "graceful-shutdown",
    about: "stopping processes cleanly",
    phrases: [
      "graceful shutdown", "shutting down", "shut down", "shutdown", "sigterm", "sigkill", "sigint", "stop timeout",
      "grace period", "terminationgraceperiodseconds", "in-flight requests", "drain connections",
     
    ],
  },
  {
    id: "startup-order",
    about: "a service starting before what it depends on is ready",
    phrases: [
      "depends_on", "startup order", "start order", "wait for the database", "wait-for-it",
      "ready to accept connections", "service_healthy", "starts before the database",
    ],
  },
  {
    id: "profiling",
    about: "measuring where time or memory goes",
    phrases: [ "flame graph", "flamegraph", "pprof", "py-spy", "cpu profile", "perf record", "performance panel", "hot path", "hot spot", "hot spots"],
  },
  {
    id: "benchmarking",
    about: "measuring speed reliably",
    phrases: ["benchmark", "benchmarks", "benchmarking", "microbenchmark", "measure performance",],
  },
  {
    id: "connection-reuse",
    about: "reusing connections instead of opening one per request",
    phrases: ["keep-alive", "keepalive", "connection reuse", "reuse connections", "tls handshake", "new connection per request", "ephemeral ports", "eaddrnotavail", "connection per request"],
  },

  // ---------------------------------------------------------------------------------------------
  // Data and databases
  {
    id: "postgres",
    about: "PostgreSQL under its names",
    phrases: ["postgres", "postgresql", "psql", "pg", "5432", "pg_stat_activity", "libpq"],
  },
  {
    id: "database",
    about: "databases in general",
    phrases: ["database", "databases", "db", "rdbms", "sql database"],
  },
  {
    id: "n-plus-one",
    about: "one query per item instead of one for the list",
    phrases: [
      "n+1", "n plus one", "query per row", "query per item",
      "eager loading", "eager load", "eagerly load", "dataloader",
      "select_related", "prefetch_related", "joinedload", "selectinload", "lazy loading relations",
    ],
  },
  {
    id: "slow-query",
    about: "diagnosing slow SQL",
    phrases: [
      "slow query", "slow queries", "seq scan", "sequential scan", "sequential scans", "full table scan",
      "explain analyze", "query plan", "query plans", "missing index", "missing indexes",
    ],
  },
  {
    id: "pagination",
    about: "paging through long lists",
    phrases: [
      "pagination", "paginate", "paginated", "page number", "page numbers",
      "later pages", "next page", "infinite scroll", "offset pagination", "keyset", "keyset pagination",
      "next_cursor",
    ],
  },
  {
    id: "schema-migration",
    about: "changing database schemas",
    phrases: [
      "migration", "migrations", "schema change", "schema changes", "alter table", "ddl", "add column", "add a column",
      "new column", "adds a column", "adding a column", "required column", "not null column", "schema migration",
      "migrate",
    ],
  },
  {
    id: "long-transaction",
    about: "transactions left open",
    phrases: ["idle in transaction", "long-running transaction", "long running transaction", "long transaction", "open transaction", "transaction left open"],
  },
  {
    id: "bulk-writes",
    about: "inserting many rows efficiently",
    phrases: ["bulk insert", "bulk inserts", "batch insert", "batch inserts", "multi-row insert", "row by row", "insert many rows",],
  },
  {
    id: "large-integers",
    about: "64-bit ids losing precision in JavaScript/JSON",
    phrases: ["bigint", "int64", "max_safe_integer", "precision loss", "lose precision", "rounded ids", "large ids"],
  },
  {
    id: "primary-keys",
    about: "choice of primary key type",
    phrases: ["uuid", "uuids", "uuidv4", "uuidv7", "primary key", "primary keys", "random ids", "identity column", "auto-increment"],
  },
  {
    id: "backups",
    about: "backups and restores",
    phrases: ["backup", "backups", "disaster recovery", "point-in-time recovery", "pitr", "pg_dump", "snapshot restore"],
  },
  {
    id: "table-bloat",
    about: "dead rows and vacuum",
    phrases: ["bloat", "table bloat", "vacuum", "autovacuum", "dead tuples", "vacuum full"],
  },
  {
    id: "text-search",
    about: "searching text in a database",
    phrases: ["full-text search", "full text search", "ilike", "substring search", "trigram", "pg_trgm", "tsvector", "fuzzy search", "search is slow", "keyword search"],
  },
  {
    id: "search-engine",
    about: "search clusters and their indexes",
    phrases: ["elasticsearch", "opensearch", "solr", "meilisearch", "reindex", "reindexing", "index alias", "index mapping", "elasticsearch mapping",],
  },
  {
    id: "optimistic-locking",
    about: "concurrent edits overwriting each other",
    phrases: [
      "lost update", "lost updates", "overwrote my changes", "last save wins",
      "concurrent edits", "optimistic locking", "version column", "edit conflict",
    ],
  },
  {
    id: "case-normalization",
    about: "identifiers that differ only by case, accents or Unicode form",
    phrases: [
      "case-insensitive", "case insensitive", "case sensitivity", "capital letters", "uppercase", "upper case",
      "lowercase", "lower case", "lower-cased", "mixed case", "unicode normalization", "unicode normalisation", "normalize emails", "normalise emails",
      "nfc", "nfkc", "visually identical",
    ],
  },
  {
    id: "money",
    about: "amounts of money and their rounding",
    phrases: [
      "money", "currency", "cents", "cent", "rounding error", "rounding errors", "floating point",
      "floating-point", "decimal", "decimals", "one cent off", "off by a cent",
    ],
  },
  {
    id: "timezones",
    about: "time zones, UTC and daylight saving",
    phrases: [
      "timezone", "timezones", "time zone", "time zones", "utc", "dst", "daylight saving", "daylight savings",
      "local time", "tz", "timestamptz", "naive datetime", "aware datetime", "tzinfo", "offset-naive",
    ],
  },
  {
    id: "unicode",
    about: "characters beyond ASCII",
    phrases: [
      "unicode", "emoji", "emojis", "utf-8", "utf8", "utf-16", "utf16", "code point", "code points", "code units",
      "surrogate pair", "surrogate pairs", "multibyte", "non-ascii", "accents", "diacritics",
    ],
  },
  {
    id: "plurals",
    about: "plural forms in user-facing text",
    phrases: ["plural", "plurals", "pluralization", "pluralisation", "plural forms", "plural rules", "singular"],
  },
  {
    id: "i18n",
    about: "translating and localising software",
    phrases: ["i18n", "internationalization", "internationalisation", "l10n", "translation", "translations",],
  },

  // ---------------------------------------------------------------------------------------------
  // Messaging and background work
  {
    id: "background-jobs",
    about: "work done outside the request",
    phrases: [
      "background job", "background jobs", "background task", "background tasks", "background worker", "job queue",
      "task queue", "async job", "celery", "sidekiq", "bullmq", "rq", "resque",
    ],
  },
  {
    id: "message-queue",
    about: "queues and message brokers",
    phrases: ["message queue", "message queues", "queue consumer", "queue consumers", "message consumer", "kafka consumer", "queue", "queues", "sqs", "rabbitmq", "pubsub", "pub/sub", "kafka", "nats", "message broker",],
  },
  {
    id: "poison-message",
    about: "a message that fails forever",
    phrases: ["dead-letter", "dead letter", "dead-letter queue", "dlq", "poison message", "poison messages", "retries forever", "stuck message", "redrive"],
  },
  {
    id: "message-redelivery",
    about: "messages delivered again because they were not acknowledged in time",
    phrases: [
      "visibility timeout", "ack deadline", "acknowledge", "acknowledgement", "ack", "acks_late", "redelivered",
      "message reappears", "worker died", "worker crashed", "worker restarted",
    ],
  },
  {
    id: "consumer-offsets",
    about: "stream consumer positions",
    phrases: [ "commit offsets", "consumer offsets", "offset commit", "enable.auto.commit", "consumer group", "rebalance", "rebalancing"],
  },
  {
    id: "event-ordering",
    about: "keeping events in order",
    phrases: [ "ordering guarantee", "message order", "event order", "partition key", "partitions"],
  },
  {
    id: "dual-write",
    about: "a database change and a published event getting out of sync",
    phrases: ["dual write", "dual writes", "transactional outbox", "outbox", "event without the change", "lost events", "publish after commit"],
  },

  // ---------------------------------------------------------------------------------------------
  // Deployment and infrastructure
  {
    id: "deploy",
    about: "putting a new version into production",
    phrases: [
      "deploy", "deploys", "deployed", "deploying", "deployment", "deployments", "rollout", "rollouts", "roll out",
      "rolled out", "ship", "shipped", "shipping", "go live", "went live", "new version", "new release",
      "redeploy", "redeployed", "release", "releases", "released",
    ],
  },
  {
    id: "rollback",
    about: "going back to the previous version",
    phrases: ["rollback", "roll back", "rolled back", "rolling back", "revert the deploy", "previous release", "downgrade", "fix-forward", "fix forward"],
  },
  {
    id: "zero-downtime",
    about: "changing systems without interrupting users",
    phrases: [
      "zero downtime", "zero-downtime", "without downtime", "no downtime", "downtime", "maintenance window",
      "blue-green", "blue green", "rolling update", "rolling updates", "rolling deploy", "side by side",
      "without taking it down",
    ],
  },
  {
    id: "progressive-delivery",
    about: "exposing a change to a few users first",
    phrases: [
      "canary", "canary release", "canaries", "progressive delivery", "progressive rollout", "gradual rollout",
      "percentage rollout", "small share of traffic", "staged rollout", "phased rollout", "phased release",
      "feature flag", "feature flags", "feature toggle", "feature toggles", "dark launch",
    ],
  },
  {
    id: "image-tags",
    about: "which container image or build a deploy refers to",
    phrases: [
      "latest tag", "mutable tag", "image tag", "image tags", "image digest", "digest",
      "immutable tag", "pulled a different image", "different build",
    ],
  },
  {
    id: "build-artifact",
    about: "building once and promoting the same artifact",
    phrases: ["artifact", "artifacts", "same artifact", "promote the build", "per-environment builds", "environment-specific builds"],
  },
  {
    id: "container-build-cache",
    about: "container builds redoing work every time",
    phrases: [
      "layer cache", "build cache", "docker cache", "cached layers", "cache layer", "layer caching",
      "reinstalls", "reinstall dependencies", "reinstalls dependencies", "cache miss",
    ],
  },
  {
    id: "image-size",
    about: "container images that are too large",
    phrases: ["image size", "large image", "huge image", "slim image", "multi-stage", "multi-stage build", "distroless", "alpine", "smaller image"],
  },
  {
    id: "docker-build-context",
    about: "what gets sent into a container build",
    phrases: ["build context", "dockerignore", ".dockerignore", "sending build context"],
  },
  {
    id: "kubernetes",
    about: "Kubernetes under its names",
    phrases: ["kubernetes", "k8s", "kubectl", "helm", "eks", "gke", "aks", "kubelet", "pod spec", "deployment manifest"],
  },
  {
    id: "container-resources",
    about: "CPU and memory requests and limits for containers",
    phrases: ["resource limits", "memory limit", "memory limits", "memory request", "cpu limit", "cpu limits", "requests and limits", "exit code 137", "137"],
  },
  {
    id: "config-rollout",
    about: "configuration or secret changes not picked up by running processes",
    phrases: ["configmap", "configmaps", "config change", "config changes", "reload config", "picked up after restart", "checksum annotation",],
  },
  {
    id: "autoscaling",
    about: "scaling on load",
    phrases: ["autoscaling", "autoscaler", "hpa", "horizontal pod autoscaler", "scaling metric", "queue depth"],
  },
  {
    id: "noisy-neighbour",
    about: "one workload starving others on shared machines",
    phrases: ["noisy neighbour", "noisy neighbor", "starve", "starves", "starved", "node pool", "node pools", "taints", "tolerations", "dedicated nodes"],
  },
  {
    id: "image-pull",
    about: "containers failing to fetch their image",
    phrases: ["imagepullbackoff", "errimagepull", "image pull", "pull image", "imagepullsecrets", "private registry", "registry credentials"],
  },
  {
    id: "infrastructure-as-code",
    about: "infrastructure defined in code",
    phrases: ["terraform", "opentofu", "pulumi", "cloudformation", "iac", "infrastructure as code", "terraform plan", "terraform apply", "state lock", "force-unlock", "state file"],
  },
  {
    id: "dns",
    about: "names and their propagation",
    phrases: ["dns", "dns records", "dns propagation", "cname", "nameserver", "nameservers", "cutover", "dns ttl"],
  },
  {
    id: "email-delivery",
    about: "emails not arriving",
    phrases: ["spam", "spam folder", "email deliverability", "junk folder", "spf", "dkim", "dmarc", "bounced", "bounces", "emails rejected", "land in spam"],
  },
  {
    id: "email",
    about: "email under its names",
    phrases: ["email", "emails", "e-mail", "mail", "newsletter", "newsletters", "smtp", "transactional email", "password-reset email"],
  },
  {
    id: "upload-limits",
    about: "large request bodies rejected",
    phrases: [
      "413", "payload too large", "request entity too large", "body size", "body limit", "body limits",
      "client_max_body_size", "upload limit", "large uploads", "large upload", "large file",
      "file upload", "file uploads", "multipart", "multer", "presigned", "presigned url",
    ],
  },
  {
    id: "realtime-connections",
    about: "long-lived connections dropping",
    phrases: [
      "websocket", "websockets", "socket.io", "realtime", "real-time", "live updates", "idle connection",
      "idle connections", "heartbeat", "heartbeats", "ping pong", "disconnects", "disconnected", "connection dropped",
      "connection drops", "dropped connection", "reconnect", "reconnects", "econnreset", "socket hang up",
    ],
  },
  {
    id: "offline-network",
    about: "clients losing connectivity",
    phrases: [
      "offline-first", "connection lost", "lost connection", "poor connectivity", "network connectivity", "offline mode", "goes offline",
      "spotty connection", "flaky network", "slow network", "network drops", "airplane mode",
      "connection dropped",
    ],
  },

  // ---------------------------------------------------------------------------------------------
  // Observability
  {
    id: "metrics",
    about: "numeric time series about a system",
    phrases: ["metric", "metrics", "prometheus", "gauge", "gauges", "histogram", "histograms", "time series", "monitoring", "grafana", "datadog"],
  },
  {
    id: "label-cardinality",
    about: "too many distinct label values in metrics",
    phrases: [
      "cardinality", "high cardinality", "high-cardinality", "label values", "unbounded labels", "metric labels",
      "too many series", "series explosion",
    ],
  },
  {
    id: "tracing",
    about: "following a request across services",
    phrases: [
      "tracing", "distributed tracing", "trace", "traces", "trace spans", "opentelemetry", "otel", "jaeger", "zipkin",
      "correlation id", "request id", "traceparent", "follow a request",
    ],
  },
  {
    id: "logging",
    about: "application logs",
    phrases: ["log", "logs", "logging", "logger", "log line", "log lines", "log message", "log messages", "log output", "structured logs", "structured logging"],
  },
  {
    id: "alerting",
    about: "paging people about problems",
    phrases: ["alert", "alerts", "alerting", "on-call", "oncall", "pagerduty", "alert fatigue", "slo", "slos", "burn rate", "error budget"],
  },
  {
    id: "server-errors",
    about: "server-side failures seen by clients",
    phrases: [
      "500", "500s", "5xx", "internal server error", "502", "503", "504", "bad gateway", "service unavailable",
      "gateway timeout", "error rate", "error rates", "errors spike",
    ],
  },
  {
    id: "root-cause",
    about: "finding the original error behind the symptoms",
    phrases: [
      "root cause", "first error", "stack trace", "stack traces", "traceback", "error chain", "cause chain",
      "original error", "rethrow", "rethrowing", "wrap errors", "error wrapping", "lost the stack",
    ],
  },
  {
    id: "minified-stack-traces",
    about: "unreadable production stack traces",
    phrases: ["source map", "source maps", "sourcemap", "sourcemaps", "minified", "minification", "symbolicate", "symbolicated", "unreadable stack traces"],
  },
  {
    id: "reproduce",
    about: "reproducing a failure",
    phrases: ["reproduce", "reproduces", "reproduced", "repro", "can't reproduce", "cannot reproduce", "hard to reproduce", "reproducible", "minimal reproduction",],
  },

  // ---------------------------------------------------------------------------------------------
  // CI, git, process
  {
    id: "ci",
    about: "continuous integration",
    phrases: [
      "ci", "continuous integration", "github actions", "gitlab ci", "circleci", "jenkins", "buildkite", "ci pipeline",
      "ci job", "ci jobs", "automated checks", "build server", "runner", "runners",
    ],
  },
  {
    id: "ci-permissions",
    about: "what CI jobs are allowed to do",
    phrases: ["github_token", "workflow permissions", "token permissions", "least privilege", "write access", "read-only token", "id-token", "contents: write"],
  },
  {
    id: "cloud-credentials-in-ci",
    about: "how CI authenticates to cloud providers",
    phrases: ["oidc", "oidc federation", "workload identity", "assume role", "role trust policy", "long-lived keys", "long-lived credentials", "aws access keys", "aws credentials"],
  },
  {
    id: "ci-dependency-cache",
    about: "caching dependencies between CI runs",
    phrases: ["ci cache", "actions/cache", "restore cache", "cache hit", "cache hits"],
  },
  {
    id: "lockfile",
    about: "dependency lock files",
    phrases: [
      "lockfile", "lockfiles", "package-lock.json", "pnpm-lock.yaml", "yarn.lock", "poetry.lock", "cargo.lock", "uv.lock",
      "gemfile.lock", "go.sum", "frozen-lockfile", "npm ci", "pinned dependencies", "pin dependencies",
    ],
  },
  {
    id: "regression",
    about: "something that used to work broke",
    phrases: [
      "regression", "regressions", "used to work", "stopped working",
      "first bad commit", "bisect", "git bisect",
    ],
  },
  {
    id: "lost-commits",
    about: "recovering git work that seems lost",
    phrases: [
      "lost commits", "lost commit", "lost work", "lost my commits", "lost my work", "commits gone",
      "reset --hard", "hard reset", "git reset", "deleted branch", "deleted the branch",
      "reflog", "undo a reset", "undo the rebase",
    ],
  },
  {
    id: "force-push",
    about: "rewriting shared history",
    phrases: ["force push", "force-push", "force pushed", "push --force", "force-with-lease", "rewrote history", "rewrite history", "overwrote commits"],
  },
  {
    id: "merge-conflict",
    about: "conflicting changes",
    phrases: ["merge conflict", "merge conflicts", "conflict markers", "rebase conflict", "rebase conflicts",],
  },
  {
    id: "code-review",
    about: "reviewing changes",
    phrases: ["pull request", "pull requests", "merge request", "merge requests", "code review", "code reviews", "reviewer", "reviewers", "prs"],
  },
  {
    id: "branch-protection",
    about: "preventing merges of unchecked code",
    phrases: ["branch protection", "required checks", "required status checks", "merged with failing tests", "merged while red", "red build", "protected branch"],
  },
  {
    id: "git-hooks",
    about: "checks run by git itself",
    phrases: ["pre-commit", "precommit", "pre-commit hook", "git hook", "git hooks", "husky", "lefthook", "lint-staged",],
  },
  {
    id: "large-files-in-git",
    about: "big binaries bloating a repository",
    phrases: ["git lfs", "large binaries", "binary files", "repository size", "huge repo", "slow clone", "clone takes"],
  },
  {
    id: "git-lock",
    about: "git refusing to run because of a lock file",
    phrases: ["index.lock", "unable to create", "another git process", "stale lock", "lock file exists"],
  },
  {
    id: "stale-lock-file",
    about: "lock files left behind by crashed processes",
    phrases: ["stale lock", "stale locks", "pid file", "flock", "o_excl", "leftover lock", "lock left behind", "force-unlock"],
  },
  {
    id: "destructive-operation",
    about: "irreversible actions",
    phrases: ["destructive", "irreversible", "drop table", "rm -rf", "wipe", "wiped", "delete the branch", "force push", "cannot be undone"],
  },
  {
    id: "generated-files",
    about: "files produced by tools",
    phrases: [ "generated code", "generated files", "codegen", "code generation", "auto-generated", "regenerate", "protobuf", "openapi client"],
  },
  {
    id: "library-version",
    about: "docs or answers not matching the installed version",
    phrases: [
      "installed version", "version mismatch", "wrong version", "breaking change", "breaking changes", "major version",
      "api changed",
    ],
  },
  {
    id: "monorepo",
    about: "many packages in one repository",
    phrases: ["monorepo", "monorepos", "workspace", "workspaces", "turborepo", "turbo", "lerna", "pnpm workspace", "sibling package", "sibling packages", "local package"],
  },
  {
    id: "release-notes",
    about: "telling users what changed",
    phrases: ["changelog", "release notes", "changeset", "changesets",],
  },
  {
    id: "documentation",
    about: "written docs",
    phrases: ["readme", "docs", "project documentation", "onboarding", "setup instructions", "adr", "adrs", "architecture decision", "design decision"],
  },

  // ---------------------------------------------------------------------------------------------
  // Testing
  {
    id: "test-suite",
    about: "automated tests",
    phrases: ["test suite", "unit test", "unit tests", "integration test", "integration tests", "vitest", "jest", "pytest", "mocha", "rspec", "junit", "go test"],
  },
  {
    id: "test-pollution",
    about: "tests affecting each other through shared state",
    phrases: [
      "test pollution", "order-dependent", "test order", "passes alone", "passes in isolation",
      "run alone", "fails when run with", "leaked state", "shared state", "global state",
      "shared fixture", "fixture scope",
    ],
  },
  {
    id: "test-timing",
    about: "time in tests",
    phrases: ["fake timers", "usefaketimers", "settimeout", "setinterval", "sleep in tests", "fixed sleep", "fixed sleeps", "waitfortimeout", "freeze the clock", "frozen clock"],
  },
  {
    id: "e2e-tests",
    about: "browser-level tests",
    phrases: ["end-to-end", "e2e", "playwright", "cypress", "selenium", "browser tests", "ui tests", "ui test"],
  },
  {
    id: "mocking",
    about: "test doubles",
    phrases: ["mock", "mocks", "mocking", "mocked", "stub", "stubs", "stubbed", "test double", "test doubles"],
  },
  {
    id: "test-determinism",
    about: "making randomised tests repeatable",
    phrases: ["seed", "seeded", "random seed", "property-based", "property based", "fast-check", "hypothesis", "deterministic", "determinism"],
  },

  // ---------------------------------------------------------------------------------------------
  // Languages and frameworks
  {
    id: "esm-cjs",
    about: "JavaScript module formats and resolution errors",
    phrases: [
      "esm", "es modules", "es module", "commonjs", "cjs", "err_module_not_found", "err_require_esm", "module not found",
      "cannot find module", "type module", "nodenext", "moduleresolution", "file extension", "extensionless",
      "err_package_path_not_exported", "exports map",
    ],
  },
  {
    id: "type-checking",
    about: "static types and their checker",
    phrases: ["type error", "type errors", "typescript error", "typecheck", "type-check", "type check", "type checker", "tsc", "mypy", "pyright", "type hints", "type annotations"],
  },
  {
    id: "type-escape-hatch",
    about: "silencing the type checker",
    phrases: [ "ts-ignore", "@ts-ignore", "ts-expect-error", "silence the type error", "suppress the error", "type: ignore", "type assertion",],
  },
  {
    id: "null-safety",
    about: "null and undefined values",
    phrases: [
      "cannot read properties of undefined", "cannot read property", "null pointer", "nil pointer", "nullpointerexception",
      "npe", "strictnullchecks", "null checks", "possibly undefined", "possibly null", "optional chaining", "nil map",
    ],
  },
  {
    id: "unhandled-rejection",
    about: "promise rejections nobody handles",
    phrases: [
      "unhandled rejection", "unhandledrejection", "unhandled promise rejection", "floating promise", "floating promises",
      "missing await", "forgot await", "forgot to await", "uncaughtexception",
    ],
  },
  {
    id: "input-validation",
    about: "validating data at boundaries",
    phrases: [ "schema validation", "runtime validation", "zod", "pydantic", "joi", "yup", "malformed input", "invalid input"],
  },
  {
    id: "environment-variables",
    about: "configuration through environment variables",
    phrases: ["environment variable", "environment variables", "env var", "env vars", "process.env", "import.meta.env", "dotenv", ".env", "env file", "missing env"],
  },
  {
    id: "react-hooks",
    about: "React hooks",
    phrases: ["react hook", "react hooks", "custom hook", "custom hooks", "useEffect", "useState", "useMemo", "useCallback", "useLayoutEffect", "rules of hooks"],
  },
  {
    id: "stale-closure",
    about: "code seeing a value captured earlier",
    phrases: [
      "stale closure", "stale closures", "stale value", "outdated value", "old value", "earlier render",
      "previous render", "captured value", "dependency array", "exhaustive-deps", "missing dependency",
      "missing dependencies",
    ],
  },
  {
    id: "rerenders",
    about: "components rendering too often",
    phrases: ["re-render", "re-renders", "re-rendering", "rerender", "rerenders", "rerendering", "unnecessary renders", "wasted renders", "render count"],
  },
  {
    id: "effect-cleanup",
    about: "subscriptions and requests outliving the component",
    phrases: [
      "cleanup function", "effect cleanup", "unmounted component", "setstate on unmounted", "duplicate subscriptions",
      "subscription leak", "abortcontroller", "navigate away",
    ],
  },
  {
    id: "hydration",
    about: "server-rendered markup not matching the client",
    phrases: [
      "hydration", "hydration mismatch", "hydration error", "server-rendered", "server rendered", "ssr",
      "does not match server-rendered html", "text content does not match",
    ],
  },
  {
    id: "bundle-size",
    about: "how much JavaScript a page downloads",
    phrases: [
      "bundle size", "bundle", "bundles", "initial bundle", "javascript bundle", "code splitting", "code-splitting",
      "lazy-load", "lazy load", "lazy loading", "dynamic import", "tree-shaking", "tree shaking", "first load",
      "page weight",
    ],
  },
  {
    id: "page-load",
    about: "how fast pages appear",
    phrases: ["page load", "lcp", "largest contentful paint", "first paint", "web vitals", "core web vitals", "layout shift", "cls", "render-blocking"],
  },
  {
    id: "search-as-you-type",
    about: "live search inputs",
    phrases: [
      "search as you type", "search-as-you-type", "typeahead", "type-ahead", "autocomplete", "autosuggest", "search suggestions", "autocomplete suggestions",
      "live search", "instant search", "debounce", "debounced", "debouncing",
     
    ],
  },
  {
    id: "error-boundary",
    about: "one failing component taking the page down",
    phrases: ["error boundary", "error boundaries", "blank page", "white screen", "white page", "blank screen", "whole page crashes", "fallback ui"],
  },
  {
    id: "list-rendering",
    about: "long lists in UIs",
    phrases: [
      "long list", "long lists", "thousands of rows", "many rows", "virtualize", "virtualise", "virtualized",
      "virtualised", "virtualization", "react-window", "flatlist", "flashlist", "scrollview",
    ],
  },
  {
    id: "deep-links",
    about: "links that should open a mobile app",
    phrases: [
      "deep link", "deep links", "deep linking", "universal link", "universal links", "app link", "app links",
      "apple-app-site-association", "assetlinks", "opens in the browser", "open in the app", "opens the browser",
      "installed app",
    ],
  },
  {
    id: "ios",
    about: "Apple platforms",
    phrases: ["ios", "iphone", "ipad", "safari", "xcode", "testflight", "app store", "macos"],
  },
  {
    id: "android",
    about: "Android platforms",
    phrases: ["android", "google play", "play store", "apk", "aab", "gradle"],
  },
  {
    id: "code-signing",
    about: "signing app builds",
    phrases: [
      "code signing", "signing key", "signing keys", "upload key", "keystore", "release key", "signing certificate",
      "distribution certificate", "provisioning profile", "provisioning profiles", "fastlane match",
    ],
  },
  {
    id: "release-build-only",
    about: "failures only in optimised or release builds",
    phrases: ["release build", "release builds", "production build", "works in debug", "debug build", "proguard", "r8", "hermes"],
  },
  {
    id: "ota-updates",
    about: "shipping JavaScript to installed apps",
    phrases: ["ota", "over-the-air", "codepush", "expo updates", "eas update",],
  },
  {
    id: "app-permissions",
    about: "asking users for device permissions",
    phrases: ["permission prompt", "permission dialog", "camera permission", "location permission", "notification permission", "permissions prompt", "denied permission"],
  },
  {
    id: "python-env",
    about: "Python environments and installs",
    phrases: ["virtualenv", "venv", "virtual environment", "pip install", "externally-managed-environment", "system python", "site-packages", "pipx", "uv venv"],
  },
  {
    id: "python-concurrency",
    about: "Python threads, processes and the GIL",
    phrases: ["gil", "global interpreter lock", "multiprocessing", "processpoolexecutor", "threadpoolexecutor",],
  },
  {
    id: "asyncio",
    about: "Python async code",
    phrases: ["asyncio", "async def", "coroutine", "coroutines", "uvicorn", "fastapi", "anyio"],
  },
  {
    id: "circular-import",
    about: "modules importing each other",
    phrases: ["circular import", "circular imports", "circular dependency", "import cycle", "partially initialized module", "cannot import name"],
  },
  {
    id: "orm-session",
    about: "ORM sessions and lazy loading after they close",
    phrases: ["detachedinstanceerror", "lazy attribute", "session closed", "lazyinitializationexception", "unit of work"],
  },
  {
    id: "duplicate-log-lines",
    about: "log messages printed more than once",
    phrases: ["logged twice", "printed twice", "every message twice", "double logging", "duplicate log", "duplicate logs", "duplicate log lines", "duplicated logs"],
  },
  {
    id: "swallowed-errors",
    about: "exceptions caught and ignored",
    phrases: ["swallow", "swallows", "swallowed", "swallowing", "bare except", "except exception", "silently ignored", "ignored errors", "empty catch"],
  },
  {
    id: "dataframes",
    about: "pandas-style data frames",
    phrases: ["pandas", "dataframe", "dataframes", "settingwithcopywarning", "chained assignment", "chained indexing", "copy of a slice"],
  },
  {
    id: "pre-fork-servers",
    about: "state shared across forked worker processes",
    phrases: [ "post_fork", "prefork", "pre-fork", "forked workers", "worker fork", "gunicorn", "uwsgi", "puma"],
  },
  {
    id: "goroutines",
    about: "Go goroutines and channels getting stuck",
    phrases: [
      "goroutine", "goroutines", "goroutine leak", "goroutine leaks", "channel", "channels", "unbuffered channel",
      "blocked on send", "blocked sending", "blocked receiving", "parked", "gopark", "chan send", "chan receive",
    ],
  },
  {
    id: "cancellation",
    about: "stopping work when the caller has gone",
    phrases: [
      "cancellation", "cancel", "cancelled", "canceled", "context canceled", "context cancelled", "client disconnected",
      "client has gone", "client went away", "request aborted", "ctx.done", "ctx", "abortsignal",
      "deadline propagation", "remaining time",
    ],
  },
  {
    id: "loop-variable-capture",
    about: "closures seeing the last loop value",
    phrases: ["loop variable", "loop variables", "loop variable capture", "closure captures", "captured loop variable", "last element",],
  },
  {
    id: "error-comparison",
    about: "checking which error occurred",
    phrases: ["errors.is", "errors.as", "error wrapping", "wrapped error", "compare error strings", "error message text", "err.error()", "error codes"],
  },
  {
    id: "rust-borrowing",
    about: "Rust ownership errors",
    phrases: ["borrow checker", "cannot borrow", "mutable borrow", "immutable borrow", "borrowed", "lifetime", "lifetimes", "does not live long enough"],
  },
  {
    id: "rust-panics",
    about: "Rust panics from unwrap/expect",
    phrases: ["unwrap", "unwrap()", "called option::unwrap", "panicked at", "thread main panicked"],
  },
  {
    id: "async-mutex",
    about: "holding locks across await points",
    phrases: ["mutexguard", "mutex guard", "future is not send",],
  },
  {
    id: "compile-time",
    about: "slow builds and compiles",
    phrases: ["slow build", "slow builds", "slow compile", "slow compiles", "compile time", "compile times", "build time", "build times", "incremental build", "incremental builds"],
  },
  {
    id: "linting",
    about: "linters and static analysis",
    phrases: ["lint", "linter", "linters", "linting", "eslint", "clippy", "ruff", "flake8", "pylint", "golangci-lint", "go vet", "static analysis"],
  },
  {
    id: "serialization",
    about: "converting data to and from JSON and other formats",
    phrases: [ "deserialize", "deserialise", "serde", "json.stringify", "marshal", "unmarshal"],
  },
  {
    id: "api-compatibility",
    about: "changing APIs without breaking clients",
    phrases: [
      "breaking change", "breaking changes", "backwards compatible", "backward compatible", "backwards compatibility",
      "old clients", "older clients", "api version", "api versions", "sunset", "/v2",
    ],
  },
  {
    id: "status-codes",
    about: "HTTP status codes",
    phrases: ["status code", "status codes", "http status", "4xx", "5xx", "200 ok", "error response", "error responses"],
  },
  {
    id: "chatty-clients",
    about: "clients making many small sequential requests",
    phrases: ["bulk endpoint", "bulk endpoints", "batch endpoint", "hundreds of requests", "sequential requests", "round trips", "round-trips", "chatty",],
  },
  {
    id: "graphql",
    about: "GraphQL servers",
    phrases: ["graphql", "graphql resolver", "graphql resolvers", "apollo", "dataloader"],
  },

  // ---------------------------------------------------------------------------------------------
  // LLM applications and parsing
  {
    id: "llm",
    about: "language models and assistants",
    phrases: [
      "llm", "llms", "large language model", "language model", "gpt", "chatgpt", "openai", "anthropic", "claude",
      "gemini", "assistant", "chatbot", "ai model", "chat completion", "chat completions", "chat.completions",
    ],
  },
  {
    id: "truncated-output",
    about: "model output cut off by a length limit",
    phrases: [
      "truncated", "truncation", "cut off", "cuts off", "mid-sentence", "incomplete output", "incomplete response",
      "partial response", "max_tokens", "max tokens", "finish_reason", "finish reason", "stop reason",
      "output limit", "unterminated string",
    ],
  },
  {
    id: "json-parse-failure",
    about: "failing to parse JSON",
    phrases: ["json.parse", "invalid json", "malformed json", "unexpected end of json", "syntaxerror", "json parse error", "unterminated string", "json decode error", "jsondecodeerror"],
  },
  {
    id: "structured-output",
    about: "getting machine-readable answers from a model",
    phrases: ["structured output", "structured outputs", "json mode", "json schema", "tool calling", "function calling", "response_format",],
  },
  {
    id: "context-window",
    about: "model input size limits",
    phrases: [
      "context window", "context length", "context limit", "maximum context length", "context_length_exceeded",
      "prompt too long", "too many tokens", "token count", "count tokens", "tiktoken",
      "prompt tokens", "conversation history",
    ],
  },
  {
    id: "prompt-injection",
    about: "untrusted text steering a model",
    phrases: ["prompt injection", "jailbreak", "injected instructions", "ignore previous instructions", "untrusted content", "indirect injection"],
  },
  {
    id: "llm-evals",
    about: "evaluating model behaviour",
    phrases: ["eval", "evals", "evaluation", "evaluations", "regression set", "golden set", "llm judge", "model judge", "llm-as-judge", "prompt change", "prompt changes"],
  },
  {
    id: "model-drift",
    about: "a model's behaviour changing without code changes",
    phrases: ["model version", "model snapshot", "model alias", "model changed", "pin the model", "dated snapshot",],
  },
  {
    id: "embeddings",
    about: "vector retrieval",
    phrases: ["embedding", "embeddings", "vector", "vectors", "vector search", "vector index", "semantic search", "similarity search", "rag", "chunking", "chunks"],
  },
  {
    id: "llm-cost",
    about: "model spend",
    phrases: ["token costs", "api bill", "model costs", "llm costs", "token budget", "spend limit", "spend", "spending", "cost per call"],
  },
  {
    id: "streaming-responses",
    about: "showing output while it is produced",
    phrases: [ "server-sent events", "sse", "partial output", "token by token", "spinner"],
  },
  {
    id: "lexer",
    about: "turning source text into tokens",
    phrases: ["lexer", "lexers", "lexing", "scanner", "lexical analysis"],
  },
  {
    id: "parser",
    about: "parsing source text",
    phrases: [ "grammar", "ast", "syntax tree", "recursive descent", "lookahead", "backtracking", "unexpected token"],
  },
  {
    id: "source-positions",
    about: "line and column numbers in diagnostics",
    phrases: ["line and column", "line number", "line numbers", "column number", "column numbers", "wrong column", "source location", "source position",],
  },
];
