import type { K8sPod } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";
import { runningSandboxRow } from "./running-sandbox-row.ts";

/** More than one page of the list the pod list is read from (500): a project may hold 1000. */
const COUNT = 520;

describe("the Kubernetes pod list of a project", () => {
  let fx: ApiFixture;
  beforeAll(async () => {
    fx = await apiFixture();
    const rows = Array.from({ length: COUNT }, (_, i) =>
      runningSandboxRow({
        id: `sbx_list${String(i).padStart(4, "0")}`,
        project_id: "prj_pods",
        org_id: "org_api",
        state: "stopped",
      }),
    );
    await fx.database.forSchema<SandboxDB>(SANDBOX_SCHEMA).insertInto("sandboxes").values(rows).execute();
  });
  afterAll(async () => {
    await fx.close();
  });

  it("lists every sandbox of the project, as its description says (it has no paging)", async () => {
    const list = await fx.as({ type: "user", id: "usr_ada", displayName: "Ada" })<{ items: K8sPod[] }>(
      "GET",
      "/k8s/api/v1/namespaces/prj_pods/pods",
    );
    expect(list.items).toHaveLength(COUNT);
    const names = list.items.map((p) => p.metadata.name);
    expect(new Set(names).size).toBe(COUNT);
    // Newest first, as the sandbox list orders them.
    expect(names[0]).toBe(`sbx_list${String(COUNT - 1).padStart(4, "0")}`);
    expect(names.at(-1)).toBe("sbx_list0000");
  });
});
