import type { ResponseOf } from "@agentplane/sdk";
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { call } from "../api/client.ts";
import { FormDialog, RadioField, TextAreaField } from "../components/form.tsx";
import { PAGE, Section } from "../components/section.tsx";
import { Button, ErrorNote, Guarded, Loading, Table, Td, TextField } from "../components/ui.tsx";
import type { Allowance } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

/** The project's connectors: remote MCP servers and HTTP APIs from an OpenAPI description. */
export function ConnectorsSection({ projectId, manage }: { projectId: string; manage: Allowance }) {
  const [creating, setCreating] = useState(false);
  const connectors = useInfiniteQuery({
    queryKey: ["connectors", projectId],
    queryFn: ({ pageParam }) =>
      call("listConnectors", { path: { projectId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
  });
  const rows = connectors.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <Section
      title="Connectors"
      actions={
        <Guarded allowance={manage}>
          {(disabled) => (
            <Button variant="primary" disabled={disabled} onClick={() => setCreating(true)}>
              New connector
            </Button>
          )}
        </Guarded>
      }
    >
      {connectors.isPending ? <Loading what="connectors" /> : null}
      <ErrorNote error={connectors.error} retry={() => void connectors.refetch()} />
      {rows.length ? (
        <Table label="Connectors" headers={["Name", "Kind", "Status", "Tools", "Version", "Source"]}>
          {rows.map((c) => (
            <tr key={c.id}>
              <Td>
                <Link to={`/connectors/${c.id}`} className="text-indigo-700 underline dark:text-indigo-300">
                  {c.name}
                </Link>
              </Td>
              <Td>{c.kind === "mcp" ? "MCP server" : "HTTP API"}</Td>
              <Td>
                {c.status}
                {c.lastError ? (
                  <span className="block text-xs text-red-800 dark:text-red-300">{c.lastError}</span>
                ) : null}
              </Td>
              <Td>{c.toolCount}</Td>
              <Td>{c.version}</Td>
              <Td mono>{c.url ?? c.specUrl ?? "inline description"}</Td>
            </tr>
          ))}
        </Table>
      ) : connectors.isSuccess ? (
        <p className="text-sm">No connectors.</p>
      ) : null}
      {connectors.hasNextPage ? (
        <Button className="mt-3" onClick={() => void connectors.fetchNextPage()}>
          More connectors
        </Button>
      ) : null}
      <CreateConnector projectId={projectId} open={creating} onOpenChange={setCreating} />
    </Section>
  );
}

type Source = "mcp" | "openapi-url" | "openapi-inline";

const SOURCES = [
  ["mcp", "MCP server URL"],
  ["openapi-url", "OpenAPI description URL"],
  ["openapi-inline", "OpenAPI description (pasted)"],
] as const satisfies readonly (readonly [Source, string])[];

type ConnectorDiscovery = ResponseOf<"previewConnectorDiscovery">;

function CreateConnector({
  projectId,
  open,
  onOpenChange,
}: {
  projectId: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const [source, setSource] = useState<Source>("mcp");
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [spec, setSpec] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const described = source === "openapi-url" ? { specUrl: url } : source === "openapi-inline" ? { spec } : { url };
  const preview = useMutation({
    mutationFn: () => call("previewConnectorDiscovery", { path: { projectId }, body: described }),
  });
  const create = useMutation({
    mutationFn: () =>
      source === "mcp"
        ? call("createMcpConnector", { path: { projectId }, body: { name, url } })
        : call("createHttpConnector", {
            path: { projectId },
            body: { name, ...described, ...(baseUrl ? { baseUrl } : {}) },
          }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["connectors", projectId] });
      setName("");
      setUrl("");
      setSpec("");
      preview.reset();
      create.reset();
      onOpenChange(false);
    },
  });
  const error = create.error ?? preview.error;
  const fieldError = fieldErrorsOf(error);
  return (
    <FormDialog
      open={open}
      onOpenChange={onOpenChange}
      title="New connector"
      noValidate
      scroll
      submission={{ isPending: create.isPending, error }}
      onSubmit={() => create.mutate()}
      submitLabel="Create connector"
      pendingLabel="Connecting…"
      actions={
        <Button disabled={preview.isPending} onClick={() => preview.mutate()}>
          {preview.isPending ? "Discovering…" : "Preview tools"}
        </Button>
      }
      below={preview.data ? <Preview discovered={preview.data} /> : null}
    >
      <RadioField
        legend="Source"
        choices={SOURCES}
        value={source}
        onChange={(value) => {
          setSource(value);
          preview.reset();
        }}
      />
      <TextField label="Name" error={fieldError("name")} value={name} onChange={(e) => setName(e.target.value)} />
      {source === "openapi-inline" ? (
        <TextAreaField
          label="Description (JSON or YAML)"
          error={fieldError("spec")}
          rows={6}
          className="font-mono"
          value={spec}
          onChange={(e) => setSpec(e.target.value)}
        />
      ) : (
        <TextField
          label={source === "mcp" ? "Server URL" : "Description URL"}
          error={fieldError(source === "mcp" ? "url" : "specUrl")}
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
      )}
      {source !== "mcp" ? (
        <TextField
          label="Base URL"
          hint="Where calls go; empty for the description's own server"
          error={fieldError("baseUrl")}
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
        />
      ) : null}
    </FormDialog>
  );
}

/** The tools a discovery found, and the operations it skipped. */
function Preview({ discovered }: { discovered: ConnectorDiscovery }) {
  return (
    <div className="mb-3 text-sm" data-testid="connector-preview">
      <p className="font-medium">
        {discovered.tools.length} tools{discovered.title ? ` from ${discovered.title}` : ""}
      </p>
      <ul className="max-h-40 list-disc overflow-y-auto pl-5">
        {discovered.tools.map((t) => (
          <li key={t.name}>
            <span className="font-mono">{t.name}</span> — {t.description}
          </li>
        ))}
      </ul>
      {discovered.warnings.length ? (
        <p className="mt-1 text-amber-900 dark:text-amber-200">
          {discovered.warnings.length} operations skipped:{" "}
          {discovered.warnings.map((w) => `${w.method} ${w.path} (${w.reason})`).join("; ")}
        </p>
      ) : null}
    </div>
  );
}
