import { INTERNAL_IDENTITY_HEADER, type Principal } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import {
  createServiceApp,
  generateInternalKeys,
  importOwnKeys,
  importScopedPublicKey,
  requirePrincipal,
  type ScopedIdentityKey,
  servicePrincipal,
  signIdentity,
  verifyIdentity,
} from "../src/index.ts";

const sandbox: Principal = { type: "sandbox", id: "sbx_1", sandboxId: "sbx_1", projectId: "prj_1", orgId: "org_1" };
const admin: Principal = { type: "user", id: "usr_admin", role: "owner" };

async function setup() {
  const shared = await generateInternalKeys();
  const own = await generateInternalKeys();
  const egress = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", JSON.stringify(own.privateJwk));
  const scoped: ScopedIdentityKey = {
    id: "egress",
    publicKey: await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", JSON.stringify(own.publicJwk)),
    routes: [
      { method: "post", path: "/internal/decisions", principalTypes: ["service"] },
      { method: "get", path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/policy", principalTypes: ["sandbox"] },
    ],
  };
  const build = (name: string, scopedKeys?: ScopedIdentityKey[]) => {
    const app = createServiceApp({
      name,
      keys: { publicKey: shared.publicKey },
      ...(scopedKeys ? { scopedKeys } : {}),
    });
    const whoami = (c: Parameters<typeof requirePrincipal>[0]) =>
      c.json({ principal: requirePrincipal(c), signer: c.get("identitySigner") ?? null });
    app.post("/internal/decisions", whoami);
    app.post("/internal/credentials", whoami);
    app.get("/v1/projects/:projectId/sandboxes/:sandboxId/policy", whoami);
    app.get("/v1/orgs", whoami);
    return app;
  };
  return { shared, egress, governance: build("governance", [scoped]), tenancy: build("tenancy") };
}

const call = (
  app: Awaited<ReturnType<typeof setup>>["governance"],
  method: string,
  path: string,
  token: string,
): Promise<Response> => Promise.resolve(app.request(path, { method, headers: { [INTERNAL_IDENTITY_HEADER]: token } }));

describe("an identity signed with a scoped signer's own key (the egress proxy's)", () => {
  it("is accepted by the service that lists it, on its routes only, and names its signer", async () => {
    const { egress, governance } = await setup();
    const svc = await signIdentity(egress, servicePrincipal("sandbox"), { audience: "governance" });
    const ok = await call(governance, "POST", "/internal/decisions", svc);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ principal: servicePrincipal("sandbox"), signer: "egress" });
    const own = await signIdentity(egress, sandbox, { audience: "governance" });
    expect((await call(governance, "GET", "/v1/projects/prj_1/sandboxes/sbx_1/policy", own)).status).toBe(200);

    // The same tokens, verified once, are refused elsewhere: the route is checked on every request.
    for (const [method, path, token] of [
      ["POST", "/internal/credentials", svc],
      ["GET", "/v1/orgs", svc],
      ["GET", "/internal/decisions", svc],
      ["POST", "/internal/decisions/", svc],
      ["GET", "/v1/projects/prj_1/sandboxes/sbx_1/policy/x", own],
      ["GET", "/v1/projects/prj_1/sandboxes/a/b/policy", own],
    ] as const) {
      const res = await call(governance, method, path, token);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toBe("Invalid internal identity");
    }
  });

  it("is refused on its routes when it names a principal the route does not take", async () => {
    const { egress, governance } = await setup();
    const user = await signIdentity(egress, admin, { audience: "governance" });
    expect((await call(governance, "POST", "/internal/decisions", user)).status).toBe(401);
    expect((await call(governance, "GET", "/v1/projects/prj_1/sandboxes/sbx_1/policy", user)).status).toBe(401);
    const svc = await signIdentity(egress, servicePrincipal("sandbox"), { audience: "governance" });
    expect((await call(governance, "GET", "/v1/projects/prj_1/sandboxes/sbx_1/policy", svc)).status).toBe(401);
  });

  it("is refused by a service that does not list it, and by the shared key's own check", async () => {
    const { egress, tenancy, shared } = await setup();
    for (const principal of [admin, servicePrincipal("sandbox")]) {
      const token = await signIdentity(egress, principal, { audience: "tenancy" });
      for (const [method, path] of [
        ["GET", "/v1/orgs"],
        ["POST", "/internal/decisions"],
      ] as const) {
        expect((await call(tenancy, method, path, token)).status).toBe(401);
      }
      await expect(verifyIdentity(shared, token, "tenancy")).rejects.toThrow();
    }
  });

  it("cannot be forged with the shared key: a kid is checked against its signer's key alone", async () => {
    const { shared, governance } = await setup();
    const forged = await signIdentity({ ...shared, keyId: "egress" }, servicePrincipal("sandbox"), {
      audience: "governance",
    });
    expect((await call(governance, "POST", "/internal/decisions", forged)).status).toBe(401);
    const unknown = await signIdentity({ ...shared, keyId: "other" }, admin, { audience: "governance" });
    expect((await call(governance, "GET", "/v1/orgs", unknown)).status).toBe(401);
  });

  it("leaves the shared key's identities as they were, on every route", async () => {
    const { shared, governance } = await setup();
    const token = await signIdentity(shared, admin, { audience: "governance" });
    for (const [method, path] of [
      ["GET", "/v1/orgs"],
      ["POST", "/internal/credentials"],
      ["POST", "/internal/decisions"],
    ] as const) {
      const res = await call(governance, method, path, token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ principal: admin, signer: null });
    }
  });

  it("names the variable of a key that is not an Ed25519 JWK", async () => {
    await expect(importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", "nope")).rejects.toThrow(
      /EGRESS_IDENTITY_PRIVATE_KEY/,
    );
    await expect(importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", "{}")).rejects.toThrow(
      /EGRESS_IDENTITY_PUBLIC_KEY/,
    );
  });
});
