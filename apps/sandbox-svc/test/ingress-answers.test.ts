import { existsSync } from "node:fs";
import type { Sandbox } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecProcess } from "../src/driver/types.ts";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";
import { requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const node = existsSync("/usr/bin/node");

/**
 * A server in the sandbox that answers every request on port 8000 with the status line its path
 * names (`/700` → `HTTP/1.1 700 Odd`), written raw: what any program on an exposed port may send.
 * The connection stays open after it (as a keep-alive server leaves it).
 */
const RAW_SERVER = `
require("net").createServer((socket) => {
  socket.once("data", (data) => {
    const code = /^\\w+ \\/(\\d{3})/.exec(data.toString("latin1"))?.[1] ?? "200";
    socket.write("HTTP/1.1 " + code + " Odd\\r\\ncontent-length: 2\\r\\n\\r\\nhi");
  });
}).listen(8000, "127.0.0.1", () => console.log("listening"));
`;

describe.skipIf(!bwrap.available || !node)(`what the ingress makes of a sandbox port's answer${bwrap.reason}`, () => {
  let fx: ApiFixture;
  let box: Sandbox;
  let server: ExecProcess;

  beforeAll(async () => {
    fx = await apiFixture();
    const as = fx.as({ type: "user", id: "usr_ada", displayName: "Ada" });
    box = await as<Sandbox>("POST", "/v1/projects/prj_api/sandboxes", {
      name: "raw",
      start: true,
      ports: [{ port: 8000, visibility: "public" }],
    });
    server = await fx.service.driver.exec(box.id, { argv: ["/usr/bin/node", "-e", RAW_SERVER] });
    await new Promise<void>((resolve) => server.stdout.once("data", () => resolve()));
  }, 60_000);
  afterAll(async () => {
    server?.kill("SIGKILL");
    await fx.close();
  });

  /** The ingress's answer to GET `path`, or "no answer" when there is none within 10 s. */
  async function get(path: string): Promise<Response | "no answer"> {
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      fx.service.ingress(new Request(`http://raw.sbx.localhost${path}`), { slug: box.slug }),
      new Promise<"no answer">((resolve) => {
        timer = setTimeout(() => resolve("no answer"), 10_000);
      }),
    ]);
    clearTimeout(timer);
    return answer;
  }

  it("passes an answer with a final status through", async () => {
    const res = await get("/201");
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(201);
    expect(await (res as Response).text()).toBe("hi");
  });

  it("answers a status no HTTP answer can have with a 502 problem naming it, at once", async () => {
    for (const code of ["700", "999", "101", "099"]) {
      const res = await get(`/${code}`);
      expect(res, code).toBeInstanceOf(Response);
      expect((res as Response).status, code).toBe(502);
      expect((res as Response).headers.get("content-type")).toContain("application/problem+json");
      expect(((await (res as Response).json()) as { detail: string }).detail).toContain(`status ${Number(code)}`);
    }
    // The service still serves the port afterwards.
    expect(((await get("/200")) as Response).status).toBe(200);
  }, 60_000);
});
