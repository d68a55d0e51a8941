// CSS files are bundled by esbuild (scripts/build-ui.mjs); importing them yields nothing.
declare module "*.css";
