import type { TeamChatState } from "@agentplane/contracts/runtime";
import { conflict } from "@agentplane/problem-details";
import type { RuntimeDeps } from "../deps.ts";
import { forgetOwner, newPairingCode, pairedOwner, pairingCode } from "./store.ts";

type StateDeps = Pick<RuntimeDeps, "config" | "database" | "teamChat">;

/** The integration's state for the channels view: configuration, connection and owner. */
export async function teamChatState(deps: StateDeps): Promise<TeamChatState> {
  const env = deps.config.env;
  const status = deps.teamChat?.status?.();
  const envOwner = env.CHAT_OWNER_ID ?? null;
  const paired = envOwner ? null : await pairedOwner(deps.database.db);
  const pending = !envOwner && !paired && (await pairingCode(deps.database.db)) !== null;
  return {
    state: status?.state ?? (env.CHAT_BOT_TOKEN ? "connecting" : "off"),
    detail: status?.detail ?? null,
    mode: env.CHAT_MODE,
    appId: status?.appId ?? null,
    botUserId: status?.botUserId ?? null,
    owner: {
      id: envOwner ?? paired,
      source: envOwner ? "env" : paired ? "paired" : null,
      pairingPending: pending,
    },
  };
}

/** Forgets the paired owner and issues a new code (through the adapter, which logs it). */
export async function resetOwner(deps: StateDeps): Promise<TeamChatState> {
  if (deps.config.env.CHAT_OWNER_ID) {
    throw conflict("The owner is set by CHAT_OWNER_ID; change the variable and restart instead.");
  }
  await forgetOwner(deps.database.db);
  if (deps.teamChat?.ownerReset) await deps.teamChat.ownerReset();
  else await newPairingCode(deps.database.db);
  return teamChatState(deps);
}
