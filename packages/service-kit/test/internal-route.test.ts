import { createServer } from "node:net";
import {
  ALL_INTERNAL_ROUTES,
  INTERNAL_IDENTITY_HEADER,
  type InternalRoute,
  internalGovernanceMetricsRoute,
  internalSignProjectTokenRoute,
  type Principal,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import {
  callInternal,
  createServiceApp,
  generateInternalKeys,
  inProcessFetch,
  internalRoute,
  runService,
  ServiceClient,
  servicePrincipal,
  signIdentity,
} from "../src/index.ts";

const alice: Principal = { type: "user", id: "usr_alice", displayName: "Alice" };

/** One service app serving a contract route the way the services do; the handler answers what it was given. */
async function serve(route: InternalRoute) {
  const keys = await generateInternalKeys();
  const app = createServiceApp({ name: route["x-service"], keys });
  // biome-ignore lint/suspicious/noExplicitAny: one handler for every contract
  (app as any).openapi(internalRoute(route), (c: any) => c.json({ reached: true }, 200));
  const pathOf = () => route.path.replace(/\{[^}]+\}/g, "x_1");
  const call = async (principal: Principal | undefined, body?: string) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (principal) {
      headers[INTERNAL_IDENTITY_HEADER] = await signIdentity(keys, principal, { audience: route["x-service"] });
    }
    return app.request(pathOf(), {
      method: route.method.toUpperCase(),
      headers,
      ...(body !== undefined && route.method !== "get" ? { body } : {}),
    });
  };
  return { app, keys, call };
}

const hasBody = (route: InternalRoute) => Boolean(route.request?.body);

interface Problem {
  type: string;
  status: number;
  detail?: string;
  errors: { pointer: string; message: string }[];
}
const problemOf = async (res: Response) => (await res.json()) as Problem;

describe("internal endpoints as contracts", () => {
  it("lists every internal contract once, each under its own operationId", () => {
    const ids = ALL_INTERNAL_ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(18);
  });

  for (const route of ALL_INTERNAL_ROUTES) {
    const name = route.operationId;
    it(`${route["x-service"]} ${name}: no identity 401, a user 403, problems before the body is read`, async () => {
      const { call } = await serve(route);
      const anonymous = await call(undefined, "{}");
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("content-type")).toBe("application/problem+json");
      // A user's identity is refused even with a malformed body: the gate runs first.
      const user = await call(alice, "{not json");
      expect(user.status).toBe(403);
      expect(user.headers.get("content-type")).toBe("application/problem+json");
      expect(await problemOf(user)).toMatchObject({ status: 403, detail: "Internal endpoints are for services only" });
    });

    if (hasBody(route)) {
      it(`${route["x-service"]} ${name}: malformed and invalid bodies are the shared 400 problem`, async () => {
        const { call } = await serve(route);
        // A caller the contract lets in (any service when it names none).
        const gateway = servicePrincipal(route["x-callers"]?.[0] ?? "gateway");
        const malformed = await call(gateway, "{not json");
        expect(malformed.status).toBe(400);
        expect(malformed.headers.get("content-type")).toBe("application/problem+json");
        expect((await problemOf(malformed)).type).toMatch(/malformed-json$/);
        const invalid = await call(gateway, JSON.stringify({ unexpected: 1 }));
        expect(invalid.status).toBe(400);
        const problem = await problemOf(invalid);
        expect(problem.type).toMatch(/validation-failed$/);
        // Each error names the field by its pointer into the body.
        expect(problem.errors.length).toBeGreaterThan(0);
        for (const error of problem.errors) expect(error.pointer).toMatch(/^\/body\//);
      });
    }
  }

  it("lets only the named callers in when the contract names them", async () => {
    const route = { ...internalGovernanceMetricsRoute, "x-callers": ["connections"] } as InternalRoute;
    const { call } = await serve(route);
    expect((await call(servicePrincipal("connections"))).status).toBe(200);
    const other = await call(servicePrincipal("sandbox"));
    expect(other.status).toBe(403);
    expect((await problemOf(other)).detail).toBe("This internal endpoint is for connections only");
  });

  it("callInternal fills path parameters, sends the body and rethrows problems", async () => {
    const keys = await generateInternalKeys();
    const app = createServiceApp({ name: "tenancy", keys });
    app.openapi(internalRoute(internalSignProjectTokenRoute), (c) => {
      const { projectId } = c.req.valid("param");
      const body = c.req.valid("json");
      if (projectId === "prj_gone")
        throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
      return c.json({ token: `${projectId}/${body.subject}/${body.ttlSeconds}`, kid: "k1" }, 200);
    });
    const client = new ServiceClient("tenancy", inProcessFetch(app), keys);
    const principal = servicePrincipal("connections");
    const body = { subject: "relay", audience: "cluster", ttlSeconds: 60 };
    const answer = await callInternal(client, internalSignProjectTokenRoute, {
      principal,
      params: { projectId: "prj a/b" },
      body,
    });
    expect(answer).toEqual({ token: "prj a/b/relay/60", kid: "k1" });
    await expect(
      callInternal(client, internalSignProjectTokenRoute, {
        principal,
        params: { projectId: "prj_gone" },
        body,
      }),
    ).rejects.toMatchObject({ status: 404, detail: "Project prj_gone was not found" });
    // A user identity through the same client is refused by the gate.
    await expect(
      callInternal(client, internalSignProjectTokenRoute, {
        principal: alice,
        params: { projectId: "p" },
        body,
      }),
    ).rejects.toMatchObject({ status: 403 });
  });
});

describe("runService", () => {
  it("rejects with EADDRINUSE when its port is taken, and closes what it opened", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    const keys = await generateInternalKeys();
    let closed = false;
    try {
      await expect(
        runService({
          name: "probe",
          processHandlers: false,
          env: {
            PORT: port,
            HOST: "127.0.0.1",
            INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
            LOG_LEVEL: "silent",
          },
          build: () => ({
            fetch: () => new Response("ok"),
            close: () => {
              closed = true;
            },
          }),
        }),
      ).rejects.toMatchObject({ code: "EADDRINUSE" });
      expect(closed).toBe(true);
    } finally {
      blocker.close();
    }
  });
});
