import {
  createSubscriptionRoute,
  deleteSubscriptionRoute,
  getSubscriptionRoute,
  updateSubscriptionRoute,
} from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toSubscription } from "../../webhooks/registry.ts";
import type { RuntimeApp } from "../types.ts";

export function registerCreateSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(createSubscriptionRoute, async (c) => {
    const row = await deps.registry.create(c.req.valid("json"));
    return c.json(toSubscription(row), 201);
  });
}

export function registerGetSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getSubscriptionRoute, (c) =>
    c.json(toSubscription(deps.registry.require(c.req.valid("param").name)), 200),
  );
}

export function registerUpdateSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateSubscriptionRoute, async (c) => {
    const row = await deps.registry.update(c.req.valid("param").name, c.req.valid("json"));
    return c.json(toSubscription(row), 200);
  });
}

export function registerDeleteSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(deleteSubscriptionRoute, async (c) => {
    await deps.registry.remove(c.req.valid("param").name);
    return c.body(null, 204);
  });
}
