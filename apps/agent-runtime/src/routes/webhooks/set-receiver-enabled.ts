import { setWebhookReceiverEnabledRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";
import { receiverState } from "./receiver-state.ts";

export function registerSetWebhookReceiverEnabled(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(setWebhookReceiverEnabledRoute, async (c) => {
    await deps.registry.setEnabled(c.req.valid("json").enabled);
    return c.json(receiverState(deps), 200);
  });
}
