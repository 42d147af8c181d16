export {
  createGovernanceService,
  GOVERNANCE_SCHEMA,
  type GovernanceService,
  type GovernanceServiceDeps,
} from "./app.ts";
export { configFromEnv, type GovernanceConfig, GovernanceEnvSchema } from "./config.ts";
