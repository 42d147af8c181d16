import { getWebhooksRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";
import { receiverState } from "./receiver-state.ts";

export function registerGetReceiver(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getWebhooksRoute, (c) => c.json(receiverState(deps), 200));
}
