import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useMemo, useState } from "react";
import { call } from "../api/client.ts";
import { ApiError } from "../lib/problem.ts";
import { fieldOfPointer, schemaFields, toArguments } from "../lib/schema-form.ts";
import { Dialog } from "./dialog.tsx";
import { Button, ErrorNote, Field, INPUT } from "./ui.tsx";

interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A form generated from the tool's input schema; the answer (or the API's problem) below it. */
export function ToolCallForm({ serverId, tool, onClose }: { serverId: string; tool: Tool; onClose: () => void }) {
  const fields = useMemo(() => schemaFields(tool.inputSchema), [tool.inputSchema]);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [local, setLocal] = useState<Record<string, string>>({});
  const run = useMutation({
    mutationFn: (args: Record<string, unknown>) =>
      call("callConnectorTool", { path: { serverId }, body: { name: tool.name, arguments: args } }),
  });
  const apiErrors: Record<string, string> = {};
  if (run.error instanceof ApiError) {
    for (const e of run.error.problem.errors ?? []) {
      const field = fieldOfPointer(e.pointer, "arguments");
      if (field) apiErrors[field] = e.message;
    }
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = toArguments(fields, values);
    setLocal(parsed.errors);
    if (!Object.keys(parsed.errors).length) run.mutate(parsed.arguments);
  };
  const set = (name: string, value: string | boolean) => setValues((v) => ({ ...v, [name]: value }));
  return (
    <Dialog
      open
      onOpenChange={(o) => (o ? undefined : onClose())}
      title={`Call ${tool.name}`}
      description={tool.description}
    >
      <form onSubmit={submit} noValidate className="max-h-[75vh] overflow-y-auto">
        {fields.length === 0 ? <p className="mb-3 text-sm">This tool takes no arguments.</p> : null}
        {fields.map((f) => {
          const error = local[f.name] ?? apiErrors[f.name];
          const label = `${f.name}${f.required ? " (required)" : ""}`;
          if (f.kind === "boolean") {
            return (
              <label key={f.name} className="mb-3 flex items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  checked={values[f.name] === true}
                  onChange={(e) => set(f.name, e.target.checked)}
                />
                {label}
                {error ? <span className="text-xs text-red-700 dark:text-red-300">{error}</span> : null}
              </label>
            );
          }
          return (
            <Field key={f.name} label={label} error={error} {...(f.description ? { hint: f.description } : {})}>
              {(p) =>
                f.kind === "enum" ? (
                  <select
                    {...p}
                    className={INPUT}
                    value={String(values[f.name] ?? "")}
                    onChange={(e) => set(f.name, e.target.value)}
                  >
                    <option value="">—</option>
                    {f.options?.map((o) => (
                      <option key={o} value={o}>
                        {o}
                      </option>
                    ))}
                  </select>
                ) : f.kind === "json" ? (
                  <textarea
                    {...p}
                    rows={3}
                    className={`${INPUT} font-mono`}
                    value={String(values[f.name] ?? "")}
                    onChange={(e) => set(f.name, e.target.value)}
                  />
                ) : (
                  <input
                    {...p}
                    className={INPUT}
                    inputMode={f.kind === "string" ? undefined : "decimal"}
                    value={String(values[f.name] ?? "")}
                    onChange={(e) => set(f.name, e.target.value)}
                  />
                )
              }
            </Field>
          );
        })}
        <ErrorNote error={run.error} />
        <Button type="submit" variant="primary" disabled={run.isPending}>
          {run.isPending ? "Calling…" : "Call tool"}
        </Button>
        {run.data ? (
          <div className="mt-3">
            <p className="text-sm font-medium">{run.data.isError ? "The tool answered with an error" : "Result"}</p>
            <pre
              data-testid="tool-result"
              className="max-h-60 overflow-auto rounded bg-slate-100 p-2 text-xs dark:bg-slate-800"
            >
              {run.data.content.map((c) => (typeof c.text === "string" ? c.text : JSON.stringify(c))).join("\n")}
              {run.data.structuredContent ? `\n${JSON.stringify(run.data.structuredContent, null, 2)}` : ""}
            </pre>
          </div>
        ) : null}
      </form>
    </Dialog>
  );
}
