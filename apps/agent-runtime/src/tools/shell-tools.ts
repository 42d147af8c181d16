import { z } from "zod";
import type { ShellBackend } from "./shell-backend.ts";
import { type AgentTool, type ToolOutcome, toolError, toolResult } from "./types.ts";
import { WorkspaceEscapeError } from "./workspace.ts";

export const DEFAULT_EXEC_TIMEOUT_SECONDS = 60;
export const MAX_EXEC_TIMEOUT_SECONDS = 600;
const READ_CAP_BYTES = 256 * 1024;

function parse<T>(schema: z.ZodType<T>, input: unknown): T | ToolOutcome {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ");
  return toolError(`Invalid input: ${issues}`);
}

const isOutcome = (v: unknown): v is ToolOutcome => typeof v === "object" && v !== null && "isError" in v;

/** A refused path is a tool error the model sees (and the run's steps keep), not a failed turn. */
async function guarded(run: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof WorkspaceEscapeError) return toolError(`Refused: ${err.message}`);
    const code = (err as { code?: string }).code;
    if (code === "ENOENT") return toolError("No such file or directory");
    if (code === "EISDIR") return toolError("Is a directory");
    if (code === "ENOTDIR") return toolError("Not a directory");
    throw err;
  }
}

const ExecInput = z
  .object({
    command: z.string().min(1).max(65_536),
    timeoutSeconds: z.number().int().min(1).max(MAX_EXEC_TIMEOUT_SECONDS).optional(),
  })
  .strict();
const ReadInput = z.object({ path: z.string().min(1).max(4096) }).strict();
const WriteInput = z
  .object({
    path: z.string().min(1).max(4096),
    content: z.string().max(4 * 1024 * 1024),
    append: z.boolean().optional(),
  })
  .strict();
const ListInput = z.object({ path: z.string().max(4096).optional() }).strict();

/** run_command, read_file, write_file, list_files over one backend (local workspace or sandbox). */
export function shellTools(backend: ShellBackend): AgentTool[] {
  const where = backend.kind === "sandbox" ? "in the agent's sandbox" : "on the agent's host";
  return [
    {
      name: "run_command",
      description:
        `Run a shell command (/bin/sh -c) ${where}, in the workspace directory ${backend.root}. ` +
        `Returns exitCode, stdout and stderr (each capped at 64 KiB) and timedOut. Default timeout ${DEFAULT_EXEC_TIMEOUT_SECONDS} s.`,
      inputSchema: {
        type: "object",
        properties: {
          command: { type: "string" },
          timeoutSeconds: { type: "integer", minimum: 1, maximum: MAX_EXEC_TIMEOUT_SECONDS },
        },
        required: ["command"],
        additionalProperties: false,
      },
      async handler(input, context) {
        const parsed = parse(ExecInput, input);
        if (isOutcome(parsed)) return parsed;
        const timeoutMs = (parsed.timeoutSeconds ?? DEFAULT_EXEC_TIMEOUT_SECONDS) * 1000;
        const result = await backend.exec(parsed.command, {
          timeoutMs,
          ...(context.signal ? { signal: context.signal } : {}),
        });
        return { content: JSON.stringify(result), isError: result.timedOut };
      },
    },
    {
      name: "read_file",
      description: "Read a text file of the workspace (a path relative to the workspace; at most 256 KiB returned).",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
        additionalProperties: false,
      },
      handler: (input) =>
        guarded(async () => {
          const parsed = parse(ReadInput, input);
          if (isOutcome(parsed)) return parsed;
          return toolResult(await backend.readFile(parsed.path, READ_CAP_BYTES));
        }),
    },
    {
      name: "write_file",
      description: "Write (or append to) a text file of the workspace, creating directories as needed.",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" }, append: { type: "boolean" } },
        required: ["path", "content"],
        additionalProperties: false,
      },
      handler: (input) =>
        guarded(async () => {
          const parsed = parse(WriteInput, input);
          if (isOutcome(parsed)) return parsed;
          return toolResult(await backend.writeFile(parsed.path, parsed.content, parsed.append ?? false));
        }),
    },
    {
      name: "list_files",
      description: "List a directory of the workspace (default: the workspace itself): name, type, size.",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" } },
        additionalProperties: false,
      },
      handler: (input) =>
        guarded(async () => {
          const parsed = parse(ListInput, input ?? {});
          if (isOutcome(parsed)) return parsed;
          return toolResult({ entries: await backend.list(parsed.path ?? ".") });
        }),
    },
  ];
}

export { isOutcome, parse as parseToolInput };
