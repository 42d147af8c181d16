import type { Sandbox } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";

describe("sandbox names over the API", () => {
  let fx: ApiFixture;
  beforeAll(async () => {
    fx = await apiFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  const base = "/v1/projects/prj_api/sandboxes";
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err as ProblemError,
    );

  it("are kept without the spaces around them, as organization, project and team names are", async () => {
    const as = fx.as({ type: "user", id: "usr_ada", displayName: "Ada" });
    const box = await as<Sandbox>("POST", base, { name: "  build box  " });
    expect(box.name).toBe("build box");
    const renamed = await as<{ sandbox?: Sandbox } & Sandbox>("PATCH", `${base}/${box.id}`, { name: " renamed\t" });
    expect(renamed.sandbox?.name ?? renamed.name).toBe("renamed");
  });

  it("refuses a name of spaces only", async () => {
    const as = fx.as({ type: "user", id: "usr_ada", displayName: "Ada" });
    const refused = await refusal(as("POST", base, { name: "   " }));
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused?.status).toBe(400);
    expect(refused?.slug).toBe("validation-failed");
  });
});
