import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { call } from "../api/client.ts";
import { AwsCredentialField, useAwsCredentials } from "../components/aws-credential-field.tsx";
import { FormDialog } from "../components/form.tsx";
import { PAGE, Section } from "../components/section.tsx";
import { Button, ErrorNote, Field, Guarded, INPUT, Loading, Table, Td, TextField } from "../components/ui.tsx";
import { parseEndpoints } from "../lib/endpoints.ts";
import type { Allowance } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";
import { EditAwsConnection } from "./connections-edit.tsx";

/** AWS accounts the project reaches through a governance credential; a test calls STS. */
export function AwsConnectionsSection({ projectId, manage }: { orgId: string; projectId: string; manage: Allowance }) {
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string>();
  const connections = useInfiniteQuery({
    queryKey: ["aws-connections", projectId],
    queryFn: ({ pageParam }) =>
      call("listAwsConnections", { path: { projectId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
  });
  const test = useMutation({
    mutationFn: (connectionId: string) => call("testAwsConnection", { path: { connectionId } }),
  });
  const remove = useMutation({
    mutationFn: (connectionId: string) => call("deleteAwsConnection", { path: { connectionId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["aws-connections", projectId] }),
  });
  const rows = connections.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <Section
      title="AWS connections"
      actions={
        <Guarded allowance={manage}>
          {(disabled) => (
            <Button variant="primary" disabled={disabled} onClick={() => setCreating(true)}>
              Connect AWS account
            </Button>
          )}
        </Guarded>
      }
    >
      {connections.isPending ? <Loading what="AWS connections" /> : null}
      <ErrorNote error={connections.error} retry={() => void connections.refetch()} />
      <ErrorNote error={test.error ?? remove.error} />
      {test.data ? (
        <p role="status" className="my-2 text-sm">
          Connected as <span className="font-mono">{test.data.arn}</span> (account {test.data.account})
        </p>
      ) : null}
      {rows.length ? (
        <Table label="AWS connections" headers={["Name", "Region", "Credential", "Endpoints", ""]}>
          {rows.map((c) => (
            <tr key={c.id}>
              <Td wrap>{c.name}</Td>
              <Td>{c.defaultRegion}</Td>
              <Td mono>{c.credentialId}</Td>
              <Td mono>{Object.keys(c.endpoints ?? {}).join(", ") || "AWS"}</Td>
              <Td>
                <span className="flex gap-2">
                  <Button aria-label={`Test ${c.name}`} disabled={test.isPending} onClick={() => test.mutate(c.id)}>
                    {test.isPending && test.variables === c.id ? "Testing…" : "Test"}
                  </Button>
                  <Guarded allowance={manage}>
                    {(disabled) => (
                      <span className="flex gap-2">
                        <Button aria-label={`Edit ${c.name}`} disabled={disabled} onClick={() => setEditing(c.id)}>
                          Edit
                        </Button>
                        <Button
                          variant="danger"
                          aria-label={`Delete ${c.name}`}
                          disabled={disabled || remove.isPending}
                          onClick={() =>
                            window.confirm(`Delete the AWS connection "${c.name}"?`) && remove.mutate(c.id)
                          }
                        >
                          Delete
                        </Button>
                      </span>
                    )}
                  </Guarded>
                </span>
              </Td>
            </tr>
          ))}
        </Table>
      ) : connections.isSuccess ? (
        <p className="text-sm">No AWS connections.</p>
      ) : null}
      {connections.hasNextPage ? (
        <Button className="mt-3" onClick={() => void connections.fetchNextPage()}>
          More AWS connections
        </Button>
      ) : null}
      {editing && rows.some((c) => c.id === editing) ? (
        <EditAwsConnection
          key={editing}
          connection={rows.find((c) => c.id === editing)!}
          onClose={() => setEditing(undefined)}
        />
      ) : null}
      <CreateAwsConnection projectId={projectId} open={creating} onOpenChange={setCreating} />
    </Section>
  );
}

function CreateAwsConnection({
  projectId,
  open,
  onOpenChange,
}: {
  projectId: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [credentialId, setCredentialId] = useState("");
  const [region, setRegion] = useState("us-east-1");
  const [endpointText, setEndpointText] = useState("");
  const endpoints = parseEndpoints(endpointText);
  const aws = useAwsCredentials(projectId, open);
  const create = useMutation({
    mutationFn: () =>
      call("createAwsConnection", {
        path: { projectId },
        body: {
          name,
          credentialId: credentialId || (aws[0]?.id ?? ""),
          defaultRegion: region,
          ...(endpoints.endpoints && Object.keys(endpoints.endpoints).length ? { endpoints: endpoints.endpoints } : {}),
        },
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["aws-connections", projectId] });
      setName("");
      create.reset();
      onOpenChange(false);
    },
  });
  const fieldError = fieldErrorsOf(create.error);
  return (
    <FormDialog
      open={open}
      onOpenChange={onOpenChange}
      title="Connect an AWS account"
      submission={create}
      onSubmit={() => create.mutate()}
      submitLabel="Connect"
      pendingLabel="Connecting…"
      invalid={!!endpoints.error}
      noValidate
    >
      <TextField label="Name" error={fieldError("name")} value={name} onChange={(e) => setName(e.target.value)} />
      <AwsCredentialField
        credentials={aws}
        value={credentialId}
        onChange={setCredentialId}
        error={fieldError("credentialId")}
        hint={
          aws.length ? "An aws-keys or aws-role credential of the project" : "The project has no AWS credential yet"
        }
      />
      <TextField
        label="Default region"
        error={fieldError("defaultRegion")}
        value={region}
        onChange={(e) => setRegion(e.target.value)}
      />
      <Field
        label="Endpoint overrides"
        error={endpoints.error ?? fieldError("endpoints")}
        hint="Optional, one per line: sts=https://sts.internal"
      >
        {(p) => (
          <textarea
            {...p}
            rows={2}
            className={`${INPUT} font-mono`}
            value={endpointText}
            onChange={(e) => setEndpointText(e.target.value)}
          />
        )}
      </Field>
    </FormDialog>
  );
}
