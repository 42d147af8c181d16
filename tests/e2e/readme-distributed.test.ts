// The README's distributed recipe, run as written: the commands come from the README itself, so
// the two cannot drift. Two substitutions keep the run apart from anything else on the machine:
// the database name (a fresh one, created by the recipe's own first start) and the Redis database.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropTestDatabase, requirePostgres, requireRedis } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, waitForHealth } from "./processes.ts";

const pg = await requirePostgres();
const redis = await requireRedis();

const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
const MARKER = "<!-- distributed-recipe:";

/** The shell block right after the recipe marker. */
export function recipeFromReadme(readme: string): string {
  const at = readme.indexOf(MARKER);
  if (at < 0) throw new Error("README has no distributed recipe marker");
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block?.[1]) throw new Error("no sh block after the distributed recipe marker");
  return block[1];
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe.skipIf(!pg.available || !redis.available)(
  `README distributed recipe, verbatim${pg.reason}${redis.reason}`,
  () => {
    const recipe = recipeFromReadme(README);
    const database = `agentplane_readme_${randomBytes(4).toString("hex")}`;
    const dir = mkdtempSync(join(tmpdir(), "agentplane-recipe-"));
    let output = "";
    let pid = 0;

    beforeAll(async () => {
      for (const port of [8080, 8081, 8082, 8083, 8084, 8085, 8086]) {
        if (await portInUse(port)) throw new Error(`port ${port} is in use; the README recipe needs it free`);
      }
      // The recipe runs from the repository root (`node scripts/bootstrap.mjs …`, `./.env.distributed`);
      // a directory whose `scripts` links there keeps the generated keys file out of the checkout.
      symlinkSync(join(REPO_ROOT, "scripts"), join(dir, "scripts"));
      const script = recipe
        .replace("127.0.0.1:5432/agentplane ", `127.0.0.1:5432/${database} `)
        .replace("REDIS_URL=redis://127.0.0.1:6379\n", "REDIS_URL=redis://127.0.0.1:6379/13\n");
      expect(script).toContain(database);
      expect(script).toContain("6379/13");
      const child = spawn("bash", ["-euc", script], {
        cwd: dir,
        detached: true,
        env: { ...process.env, LOG_LEVEL: "warn", PUBLIC_URL: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      pid = child.pid ?? 0;
      child.stdout.on("data", (c: Buffer) => {
        output += c.toString();
      });
      child.stderr.on("data", (c: Buffer) => {
        output += c.toString();
      });
      try {
        await waitForHealth("http://127.0.0.1:8080", 120_000);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${output}`);
      }
    }, 150_000);

    afterAll(async () => {
      if (pid) {
        try {
          process.kill(-pid, "SIGTERM");
        } catch {}
        await new Promise((r) => setTimeout(r, 1500));
        try {
          process.kill(-pid, "SIGKILL");
        } catch {}
      }
      rmSync(dir, { recursive: true, force: true });
      await dropTestDatabase(database);
    });

    it("writes a keys file that the shell sources unchanged", () => {
      const keys = readFileSync(join(dir, ".env.distributed"), "utf8");
      expect(keys).toMatch(/^INTERNAL_IDENTITY_PRIVATE_KEY='\{"crv":"Ed25519"/m);
      expect(keys).toMatch(/^AGENTPLANE_SECRET_KEY='[A-Za-z0-9+/]{43}='$/m);
      // The egress proxy's own pair (decision 0062): governance of the recipe reads the public half.
      expect(keys).toMatch(/^EGRESS_IDENTITY_PRIVATE_KEY='\{"crv":"Ed25519","d":/m);
      expect(keys).toMatch(/^EGRESS_IDENTITY_PUBLIC_KEY='\{"crv":"Ed25519","x":"[^"]+","kty":"OKP"\}'$/m);
    });

    it("starts every service of the recipe from an empty database, behind the gateway", async () => {
      const health = (await (await fetch("http://127.0.0.1:8080/health")).json()) as Record<string, unknown>;
      const services = health.services as Record<string, string>;
      for (const service of ["tenancy", "sandbox", "audit", "governance", "connections", "inference"]) {
        expect(services[service]).toBe("ready");
      }
      for (const port of [8081, 8082, 8083, 8084, 8085, 8086]) {
        expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      }
    });

    it("gives activation links the gateway's own address when PUBLIC_URL is unset", async () => {
      const res = await fetch("http://127.0.0.1:8080/v1/installation/activation", { method: "POST" });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { verificationUri: string };
      expect(body.verificationUri).toBe("http://127.0.0.1:8080/activate");
    });
  },
);
