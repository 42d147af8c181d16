import type { Sandbox } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";

describe("sandbox requests the service refuses with a 400", () => {
  let fx: ApiFixture;
  beforeAll(async () => {
    fx = await apiFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  const base = "/v1/projects/prj_api/sandboxes";
  const as = () => fx.as({ type: "user", id: "usr_ada", displayName: "Ada" });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err as ProblemError,
    );

  it("refuses a port asked for twice, at create and at update", async () => {
    const twice = [
      { port: 8000, visibility: "private" },
      { port: 8000, visibility: "public" },
    ];
    const created = await refusal(as()("POST", base, { name: "ports", ports: twice }));
    expect(created).toBeInstanceOf(ProblemError);
    expect(created).toMatchObject({ status: 400, slug: "validation-failed" });
    const box = await as()<Sandbox>("POST", base, { name: "ports", ports: [{ port: 8000 }] });
    const updated = await refusal(as()("PATCH", `${base}/${box.id}`, { ports: twice }));
    expect(updated).toMatchObject({ status: 400, slug: "validation-failed" });
    expect((await as()<Sandbox>("GET", `${base}/${box.id}`)).ports).toMatchObject([
      { port: 8000, visibility: "private" },
    ]);
  });

  it("answers a rollback to a revision past any a sandbox can have with a 400, not a 500", async () => {
    const box = await as()<Sandbox>("POST", base, { name: "rollback" });
    const refused = await refusal(as()("POST", `${base}/${box.id}/rollback`, { revision: 2 ** 31 }));
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused).toMatchObject({ status: 400, slug: "validation-failed" });
    const missing = await refusal(as()("POST", `${base}/${box.id}/rollback`, { revision: 2 ** 31 - 1 }));
    expect(missing).toMatchObject({ status: 404 });
  });
});
