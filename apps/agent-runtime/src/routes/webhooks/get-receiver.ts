import { getWebhookReceiverRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";
import { receiverState } from "./receiver-state.ts";

export function registerGetWebhookReceiver(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getWebhookReceiverRoute, (c) => c.json(receiverState(deps), 200));
}
