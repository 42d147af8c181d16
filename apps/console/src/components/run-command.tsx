import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { call } from "../api/client.ts";
import type { Allowance } from "../lib/permissions.ts";
import { Button, ErrorNote, TextField } from "./ui.tsx";

/** One command in a sandbox (`POST /v1/shell/exec`): its output, or the policy rule that denied it. */
export function RunCommand({
  projectId,
  sandboxId,
  allowance,
}: {
  projectId: string;
  sandboxId: string;
  allowance: Allowance;
}) {
  const [command, setCommand] = useState("echo hello");
  const run = useMutation({
    mutationFn: () => call("execShell", { body: { projectId, sandboxId, command: ["sh", "-c", command] } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    run.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Run a command" className="mt-4 max-w-3xl">
      <TextField
        label="Command"
        hint={allowance.reason}
        className="font-mono"
        value={command}
        onChange={(e) => setCommand(e.target.value)}
      />
      <Button type="submit" disabled={!allowance.allowed || run.isPending}>
        {run.isPending ? "Running…" : "Run"}
      </Button>
      <ErrorNote error={run.error} />
      {run.data ? (
        <pre
          className="mt-2 overflow-x-auto rounded bg-slate-100 p-2 text-xs dark:bg-slate-800"
          data-testid="command-output"
        >
          {`exit ${run.data.exitCode}\n${run.data.stdout}${run.data.stderr}`}
        </pre>
      ) : null}
    </form>
  );
}
