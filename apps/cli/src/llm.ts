/**
 * Entry of `dist/cm-llm.cjs`: the LLM layer (the AI SDK and providers) as a bundle of its own,
 * loaded by `loadLlm` only when a command learns from sessions or semantic search is enabled
 * (`createEmbedder`). Keeping it out of `cm-main.cjs` keeps the AI SDK off the start-up path of
 * every other command.
 */
export { createEmbedder, createLlmLearning, resolveLlmSettings } from "@cass-memory/llm";
