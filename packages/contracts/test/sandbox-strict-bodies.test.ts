import { zodIssuesToFieldErrors } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import {
  CreateSandboxRequest,
  CreateSandboxTokenRequest,
  CreateShellSessionRequest,
  ExecRequest,
  RollbackRequest,
  ShellSessionCommandRequest,
  UpdateSandboxRequest,
} from "../src/sandbox/schemas.ts";

/** The pointers the shared validation hook would answer for this body. */
function pointers(
  schema: { safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } } },
  body: unknown,
) {
  const result = schema.safeParse(body);
  if (result.success) return [];
  return zodIssuesToFieldErrors("body", result.error!.issues as never).map((e) => `${e.pointer}: ${e.message}`);
}

describe("sandbox request bodies reject unknown fields, naming them, as tenancy's do", () => {
  it.each([
    ["create", CreateSandboxRequest, { name: "box", idleTimeoutSecond: 60 }, "/body/idleTimeoutSecond"],
    [
      "create, inside a port",
      CreateSandboxRequest,
      { name: "box", ports: [{ port: 80, public: true }] },
      "/body/ports/0/public",
    ],
    ["create, inside resources", CreateSandboxRequest, { name: "box", resources: { cpu: 2 } }, "/body/resources/cpu"],
    ["update", UpdateSandboxRequest, { nmae: "x" }, "/body/nmae"],
    ["rollback", RollbackRequest, { revision: 1, force: true }, "/body/force"],
    ["exec", ExecRequest, { projectId: "p", sandboxId: "s", command: "ls", tty: true }, "/body/tty"],
    ["shell session", CreateShellSessionRequest, { sandboxId: "s", shell: "bash" }, "/body/shell"],
    ["shell command", ShellSessionCommandRequest, { command: "ls", cwd: "/" }, "/body/cwd"],
    ["sandbox token", CreateSandboxTokenRequest, { sandboxId: "s", name: "t", role: "admin" }, "/body/role"],
  ])("%s", (_name, schema, body, pointer) => {
    expect(pointers(schema, body)).toEqual([`${pointer}: Unknown field`]);
  });

  it("still accepts the documented fields", () => {
    expect(
      pointers(CreateSandboxRequest, {
        name: "box",
        ports: [{ port: 80, visibility: "public" }],
        resources: { cpuMillicores: 500 },
        env: { A: "1" },
      }),
    ).toEqual([]);
  });
});
