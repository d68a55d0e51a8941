declare const __CM_VERSION__: string | undefined;

/** This package's version, injected from package.json by tsup at build time. */
export const VERSION: string = typeof __CM_VERSION__ === "string" ? __CM_VERSION__ : "0.0.0-dev";
