import packageJson from "../package.json" with { type: "json" };

/** The package's version (what /health and `acs-server --version` report). */
export const VERSION: string = packageJson.version;
