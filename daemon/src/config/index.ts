/**
 * The daemon's configuration layer: load, validate and resolve the config file (`loadConfig`,
 * `parseConfig`), print it safely (`redactServerConfig`) and compare two versions (`diffConfigs`).
 * Internal barrel for daemon code; the package's public exports are chosen in src/index.ts.
 */
export * from "./config-schema.js";
export { loadConfig, assertConfigFileExists, explicitConfigOrigin, type LoadConfigOptions, type ConfigFileOrigin } from "./load-config.js";
export { parseConfig, emptyConfig, type ParseConfigOptions } from "./parse-config.js";
export { expandVars, type ExpandResult } from "./expand-vars.js";
export { redactServerConfig } from "./redact-config.js";
export { httpPortFromEnv } from "./http-settings.js";
export { diffConfigs, type ConfigDiff } from "./diff-configs.js";
export { canonicalJson, shortHash } from "./config-hash.js";
