// Configuration entry point: the schema lives in ./config/*, one section per concern.
export { configSchema, type Config, type ConfigInput } from './config/schema.js';
export { loadConfig, ConfigError, DEFAULT_CONFIG_FILE } from './config/load.js';
export { leaves, envTable, markdownReference, ENV_PREFIX } from './config/env.js';
