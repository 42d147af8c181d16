import { EGRESS_IDENTITY_SIGNER } from "@agentplane/contracts";
import {
  ConfigError,
  type InternalKeys,
  importInternalKeys,
  importOwnKeys,
  type Logger,
} from "@agentplane/service-kit";
import type { EgressEnv } from "../driver/kubernetes/egress-service.ts";

/**
 * The proxy's identity keys: its own pair when `EGRESS_IDENTITY_PRIVATE_KEY` is set (the shared
 * private key, if the environment has it too, is left unread); otherwise the shared pair, as
 * installations made before its own key do (a warning says so).
 */
export async function egressIdentityKeys(
  env: Pick<EgressEnv, "EGRESS_IDENTITY_PRIVATE_KEY" | "INTERNAL_IDENTITY_PRIVATE_KEY">,
  logger: Logger,
): Promise<InternalKeys> {
  if (env.EGRESS_IDENTITY_PRIVATE_KEY) {
    return importOwnKeys(EGRESS_IDENTITY_SIGNER, "EGRESS_IDENTITY_PRIVATE_KEY", env.EGRESS_IDENTITY_PRIVATE_KEY);
  }
  if (!env.INTERNAL_IDENTITY_PRIVATE_KEY) {
    throw new ConfigError([
      {
        name: "EGRESS_IDENTITY_PRIVATE_KEY",
        message:
          "required: the egress proxy signs its calls to governance with it (`node scripts/bootstrap.mjs platform keys` prints one)",
      },
    ]);
  }
  logger.warn(
    "EGRESS_IDENTITY_PRIVATE_KEY is not set: the egress proxy signs with the shared INTERNAL_IDENTITY_PRIVATE_KEY, which every service accepts",
  );
  return importInternalKeys({ privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY });
}
