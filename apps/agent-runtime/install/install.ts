#!/usr/bin/env node
// Native install of the agent runtime: `node scripts/bootstrap.mjs node apps/agent-runtime/install/install.ts [--systemd]`.
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { envTemplate } from "./env-template.ts";

const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export interface InstallOptions {
  /** Default `~/.agent` (`%USERPROFILE%\.agent` on Windows: homedir() is that folder there). */
  agentHome?: string;
  /** Write a systemd user unit (Linux) into `<configHome>/systemd/user`. */
  systemd?: boolean;
  configHome?: string;
  platform?: NodeJS.Platform;
  nodePath?: string;
}

export interface InstallReport {
  agentHome: string;
  /** false: an .env was already there and is left as it is. */
  envWritten: boolean;
  files: string[];
}

function writeExecutable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/**
 * Lays out AGENT_HOME: the commented `.env` template (never over an existing one), the workspace,
 * skills and plugins folders, start commands for the runtime and the terminal UI, and on request a
 * systemd user unit. Re-running it refreshes the commands and keeps everything the user edited.
 */
export function install(options: InstallOptions = {}): InstallReport {
  const platform = options.platform ?? process.platform;
  const agentHome = resolve(options.agentHome ?? join(homedir(), ".agent"));
  const node = options.nodePath ?? process.execPath;
  const bootstrap = join(CHECKOUT, "scripts", "bootstrap.mjs");
  const files: string[] = [];
  // Threads, memory and the key of its secrets live here: the owner's only (0700), also when an
  // earlier install left it open.
  mkdirSync(agentHome, { recursive: true, mode: 0o700 });
  if (platform !== "win32" && (statSync(agentHome).mode & 0o077) !== 0) chmodSync(agentHome, 0o700);
  for (const dir of ["workspace", "skills", "plugins", "bin"]) mkdirSync(join(agentHome, dir), { recursive: true });

  const envPath = join(agentHome, ".env");
  const envWritten = !existsSync(envPath);
  if (envWritten) {
    writeFileSync(envPath, envTemplate(), { mode: 0o600 });
    files.push(envPath);
  } else if (platform !== "win32" && (statSync(envPath).mode & 0o077) !== 0) {
    // It holds the model credential and tokens: one made by hand (0644 by the umask) is closed too.
    chmodSync(envPath, 0o600);
  }

  if (platform === "win32") {
    const runtime = join(agentHome, "bin", "agent-runtime.cmd");
    writeFileSync(runtime, `@echo off\r\nset "AGENT_HOME=${agentHome}"\r\n"${node}" "${bootstrap}" runtime %*\r\n`);
    const tui = join(agentHome, "bin", "agent-tui.cmd");
    writeFileSync(tui, `@echo off\r\nset "AGENT_HOME=${agentHome}"\r\n"${node}" "${bootstrap}" tui %*\r\n`);
    files.push(runtime, tui);
  } else {
    const runtime = join(agentHome, "bin", "agent-runtime");
    writeExecutable(runtime, `#!/bin/sh\nAGENT_HOME='${agentHome}' exec '${node}' '${bootstrap}' runtime "$@"\n`);
    // The terminal UI reads AGENT_HTTP_URL (default http://localhost:3003).
    const tui = join(agentHome, "bin", "agent-tui");
    writeExecutable(tui, `#!/bin/sh\nAGENT_HOME='${agentHome}' exec '${node}' '${bootstrap}' tui "$@"\n`);
    files.push(runtime, tui);
  }

  if (options.systemd && platform === "linux") {
    const unitDir = join(
      options.configHome ?? process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"),
      "systemd",
      "user",
    );
    mkdirSync(unitDir, { recursive: true });
    const unit = join(unitDir, "agent-runtime.service");
    writeFileSync(
      unit,
      [
        "[Unit]",
        "Description=Agent runtime",
        "After=network-online.target",
        "",
        "[Service]",
        `Environment=AGENT_HOME=${agentHome}`,
        `ExecStart=${join(agentHome, "bin", "agent-runtime")}`,
        "Restart=on-failure",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
      ].join("\n"),
    );
    files.push(unit);
  }
  return { agentHome, envWritten, files };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = install({
    ...(process.env.AGENT_HOME ? { agentHome: process.env.AGENT_HOME } : {}),
    systemd: process.argv.includes("--systemd"),
  });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`Agent runtime installed in ${report.agentHome}`);
  out(
    report.envWritten
      ? `  wrote ${join(report.agentHome, ".env")} (set one model credential in it)`
      : "  kept the existing .env",
  );
  for (const file of report.files.filter((f) => !f.endsWith(".env"))) out(`  wrote ${file}`);
  out(`Start: ${join(report.agentHome, "bin", process.platform === "win32" ? "agent-runtime.cmd" : "agent-runtime")}`);
  out("Then open http://localhost:3003/ or run agent-tui.");
  if (process.argv.includes("--systemd")) out("Enable: systemctl --user enable --now agent-runtime");
}
