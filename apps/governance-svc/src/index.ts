export {
  createGovernanceService,
  GOVERNANCE_SCHEMA,
  type GovernanceService,
  type GovernanceServiceDeps,
} from "./app.ts";
export {
  configFromEnv as governanceConfigFromEnv,
  configFromSettings as governanceConfigFromSettings,
  type GovernanceConfig,
  type GovernanceEnv,
  GovernanceEnvSchema,
  type GovernanceSettings,
  GovernanceSettingsSchema,
} from "./config.ts";
