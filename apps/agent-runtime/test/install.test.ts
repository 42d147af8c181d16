import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENV_SECTIONS, envTemplate } from "../install/env-template.ts";
import { install } from "../install/install.ts";
import { loadConfig, RuntimeEnvSchema, readEnvironment } from "../src/config.ts";

const temp = () => mkdtempSync(join(tmpdir(), "agent-install-"));

describe("native install", () => {
  it("lists every runtime variable once in the template, commented, with its default", () => {
    const listed = ENV_SECTIONS.flatMap((s) => s.variables);
    expect([...listed].sort()).toEqual(Object.keys(RuntimeEnvSchema.shape).sort());
    const text = envTemplate();
    for (const name of listed) expect(text).toMatch(new RegExp(`^# ${name}=`, "m"));
    expect(text).toMatch(/^# PORT=3003$/m);
    expect(text).toMatch(/^# HOST=127\.0\.0\.1$/m);
    expect(text).toMatch(/^# AGENT_HTTP_URL=http:\/\/localhost:3003$/m);
    // A /v1 in the address stops the start; a token of several projects fails every model call.
    expect(text).toContain("GATEWAY_API_URL (the gateway's address, e.g. http://localhost:8080, without /v1)");
    expect(text).toContain("GATEWAY_API_TOKEN (a token restricted to one project)");
    // Nothing is set: the file as written configures nothing.
    expect(text.split("\n").filter((l) => l.trim() && !l.startsWith("#"))).toEqual([]);
  });

  it("keeps AGENT_HOME to its owner (0700), also one an earlier install left open", () => {
    const fresh = join(temp(), "agent");
    install({ agentHome: fresh, platform: "linux" });
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    const open = temp();
    chmodSync(open, 0o755);
    install({ agentHome: open, platform: "linux" });
    expect(statSync(open).mode & 0o777).toBe(0o700);
  });

  it("closes an existing .env to its owner (0600), keeping what it says", () => {
    const home = temp();
    const text = "CLOUD_B_API_KEY=key-1\n";
    writeFileSync(join(home, ".env"), text);
    chmodSync(join(home, ".env"), 0o644);
    expect(install({ agentHome: home, platform: "linux" }).envWritten).toBe(false);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe(text);
  });

  it("lays out AGENT_HOME, never overwrites an edited .env, and the runtime reads it", () => {
    const home = temp();
    const config = temp();
    const first = install({ agentHome: home, systemd: true, configHome: config, platform: "linux" });
    expect(first.envWritten).toBe(true);
    for (const dir of ["workspace", "skills", "plugins"]) expect(statSync(join(home, dir)).isDirectory()).toBe(true);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    const unit = readFileSync(join(config, "systemd", "user", "agent-runtime.service"), "utf8");
    expect(unit).toContain(`ExecStart=${join(home, "bin", "agent-runtime")}`);

    const edited = `${readFileSync(join(home, ".env"), "utf8")}\nLLM_PROVIDER=cloud-b\nCLOUD_B_API_KEY=key-1\nCLOUD_B_RESOURCE_NAME=res\nAGENT_NAME=Installed\n`;
    writeFileSync(join(home, ".env"), edited);
    const second = install({ agentHome: home, platform: "linux" });
    expect(second.envWritten).toBe(false);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe(edited);

    // What the runtime reads at start: the process environment, then <AGENT_HOME>/.env.
    const loaded = loadConfig(readEnvironment({ AGENT_HOME: home }));
    expect(loaded.provider).toBe("cloud-b");
    expect(loaded.env.AGENT_NAME).toBe("Installed");
    expect(loaded.workspaceRoot).toBe(join(home, "workspace"));
  });

  it("writes a start command that runs the runtime from this checkout with that AGENT_HOME", () => {
    const home = temp();
    install({ agentHome: home, platform: "linux", nodePath: "/usr/bin/env" });
    const start = readFileSync(join(home, "bin", "agent-runtime"), "utf8");
    const checkout = fileURLToPath(new URL("../../..", import.meta.url)).replace(/\/$/, "");
    expect(start).toContain(`AGENT_HOME='${home}'`);
    expect(start).toContain(`'${join(checkout, "scripts", "bootstrap.mjs")}' runtime`);
    // The shell script is valid: `sh -n` parses it.
    execFileSync("sh", ["-n", join(home, "bin", "agent-runtime")]);
    execFileSync("sh", ["-n", join(home, "bin", "agent-tui")]);
    const win = temp();
    install({ agentHome: win, platform: "win32" });
    expect(readFileSync(join(win, "bin", "agent-runtime.cmd"), "utf8")).toContain(`set "AGENT_HOME=${win}"`);
  });
});
