// Types of split.mjs (so TypeScript tests can import it).

export declare function fnv1a(text: string): number;
export declare function splitOf(taskId: string): "heldout" | "dev";
