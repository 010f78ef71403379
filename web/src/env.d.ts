// esbuild bundles the CSS a module imports.
declare module "*.css";
