/**
 * What a model call costs (reference §5.15): USD per million input and output tokens. Models not
 * in the table are priced at 5 / 15, so an unknown model is never free by accident; models served
 * locally (Ollama, a baseUrl on this machine or the local network) cost nothing.
 */

export interface ModelPrice {
  /** USD per 1,000,000 input tokens. */
  input: number;
  /** USD per 1,000,000 output tokens. */
  output: number;
}

export const UNKNOWN_MODEL_PRICE: ModelPrice = { input: 5, output: 15 };
export const FREE_PRICE: ModelPrice = { input: 0, output: 0 };

/** Model name prefixes and their prices. The longest matching prefix wins. */
export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  "claude-sonnet-5": { input: 3, output: 15 },
  "claude-sonnet-4-6": { input: 3, output: 15 },
  "claude-sonnet-4-5": { input: 3, output: 15 },
  "claude-sonnet-4-20250514": { input: 3, output: 15 },
  "claude-3-5-sonnet": { input: 3, output: 15 },
  "claude-opus-5": { input: 5, output: 25 },
  "claude-opus-4-8": { input: 5, output: 25 },
  "claude-haiku-4-5": { input: 1, output: 5 },
  "claude-3-opus": { input: 15, output: 75 },
  "claude-3-haiku": { input: 0.25, output: 1.25 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  "gpt-4-turbo": { input: 10, output: 30 },
  "gemini-1.5-pro": { input: 3.5, output: 10.5 },
  "gemini-1.5-flash": { input: 0.075, output: 0.3 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4 },
};

/**
 * The price of a model by name. A gateway prefix (`openai/gpt-4o`, `models/gemini-1.5-pro`) is
 * ignored; dated or tagged variants (`gpt-4o-mini-2024-07-18`, `claude-3-haiku-20240307`) match
 * their family. Unknown names get UNKNOWN_MODEL_PRICE.
 */
export function priceOf(model: string): ModelPrice {
  const name = model.trim().toLowerCase().split("/").pop() ?? "";
  let best: string | undefined;
  for (const key of Object.keys(MODEL_PRICES)) {
    if (name !== key && !(name.startsWith(key) && /[-:@]/.test(name.charAt(key.length)))) continue;
    if (best === undefined || key.length > best.length) best = key;
  }
  return best === undefined ? UNKNOWN_MODEL_PRICE : (MODEL_PRICES[best] ?? UNKNOWN_MODEL_PRICE);
}

/** USD for one call: tokensIn/1e6 × input + tokensOut/1e6 × output (0 for local models). */
export function costOf(usage: { model: string; local: boolean; tokensIn: number; tokensOut: number }): number {
  const price = usage.local ? FREE_PRICE : priceOf(usage.model);
  const tokensIn = Number.isFinite(usage.tokensIn) && usage.tokensIn > 0 ? usage.tokensIn : 0;
  const tokensOut = Number.isFinite(usage.tokensOut) && usage.tokensOut > 0 ? usage.tokensOut : 0;
  return (tokensIn / 1_000_000) * price.input + (tokensOut / 1_000_000) * price.output;
}
