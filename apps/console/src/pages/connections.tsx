import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProjectRole } from "../api/hooks.ts";
import { FormDialog } from "../components/form.tsx";
import { ProjectPicker, useChosenProject } from "../components/project-picker.tsx";
import { SecretDialog } from "../components/secret-dialog.tsx";
import { PAGE, Section } from "../components/section.tsx";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { type Allowance, allows } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";
import { AwsConnectionsSection } from "./connections-aws.tsx";
import { EditCluster, NameFields } from "./connections-edit.tsx";
import { ConnectorsSection } from "./connectors.tsx";

/** Clusters, AWS connections and connectors of one project (chosen in the URL). */
export default function ConnectionsPage() {
  const { orgId } = useParams() as { orgId: string };
  const { projectId, projects, choose } = useChosenProject(orgId);
  const role = useProjectRole(projectId);
  const manage = allows("connections:manage", role);
  return (
    <>
      <PageTitle>Connections</PageTitle>
      <ProjectPicker orgId={orgId} projectId={projectId} onChange={choose} />
      <ErrorNote error={projects.error} retry={() => void projects.refetch()} />
      {projects.isSuccess && !projectId ? <p className="text-sm">Create a project first.</p> : null}
      {projectId ? (
        <>
          <ClustersSection projectId={projectId} manage={manage} />
          <AwsConnectionsSection orgId={orgId} projectId={projectId} manage={manage} />
          <ConnectorsSection projectId={projectId} manage={manage} />
        </>
      ) : null}
    </>
  );
}

const STATUS_STYLE: Record<string, string> = {
  connected: "text-green-800 dark:text-green-300",
  disconnected: "text-red-800 dark:text-red-300",
  pending: "text-slate-700 dark:text-slate-300",
};

function ClustersSection({ projectId, manage }: { projectId: string; manage: Allowance }) {
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string>();
  const [secret, setSecret] = useState<{ title: string; token: string } | undefined>();
  const clusters = useInfiniteQuery({
    queryKey: ["clusters", projectId],
    queryFn: ({ pageParam }) =>
      call("listClusters", { path: { projectId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: 10_000,
  });
  const rotate = useMutation({
    mutationFn: (clusterId: string) => call("rotateClusterTunnelToken", { path: { clusterId } }),
    onSuccess: (rotated) => setSecret({ title: "The cluster's new tunnel token", token: rotated.tunnelToken }),
  });
  const remove = useMutation({
    mutationFn: (clusterId: string) => call("deleteCluster", { path: { clusterId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["clusters", projectId] }),
  });
  const rows = clusters.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <Section
      title="Clusters"
      actions={
        <Guarded allowance={manage}>
          {(disabled) => (
            <Button variant="primary" disabled={disabled} onClick={() => setCreating(true)}>
              Register cluster
            </Button>
          )}
        </Guarded>
      }
    >
      {clusters.isPending ? <Loading what="clusters" /> : null}
      <ErrorNote error={clusters.error} retry={() => void clusters.refetch()} />
      <ErrorNote error={rotate.error ?? remove.error} />
      {rows.length ? (
        <Table label="Clusters" headers={["Name", "Id", "Status", "Since", "Kubernetes", "Relay", ""]}>
          {rows.map((c) => (
            <tr key={c.id}>
              <Td wrap>{c.name}</Td>
              <Td mono>{c.id}</Td>
              <Td>
                <span data-testid={`cluster-status-${c.name}`} className={STATUS_STYLE[c.status] ?? ""}>
                  {c.status}
                </span>
              </Td>
              <Td>{c.statusSince ? new Date(c.statusSince).toLocaleString() : "—"}</Td>
              <Td>{c.kubernetesVersion ?? "—"}</Td>
              <Td>{c.relayVersion ?? "—"}</Td>
              <Td>
                <Guarded allowance={manage}>
                  {(disabled) => (
                    <span className="flex gap-2">
                      <Button aria-label={`Edit ${c.name}`} disabled={disabled} onClick={() => setEditing(c.id)}>
                        Edit
                      </Button>
                      <Button
                        aria-label={`Rotate token of ${c.name}`}
                        disabled={disabled || rotate.isPending}
                        onClick={() => {
                          if (window.confirm(`Rotate the tunnel token of "${c.name}"? The old token stops working.`)) {
                            rotate.mutate(c.id);
                          }
                        }}
                      >
                        {rotate.isPending && rotate.variables === c.id ? "Rotating…" : "Rotate token"}
                      </Button>
                      <Button
                        variant="danger"
                        aria-label={`Delete ${c.name}`}
                        disabled={disabled || remove.isPending}
                        onClick={() => {
                          if (window.confirm(`Delete the cluster "${c.name}"? Its tunnel closes.`)) remove.mutate(c.id);
                        }}
                      >
                        Delete
                      </Button>
                    </span>
                  )}
                </Guarded>
              </Td>
            </tr>
          ))}
        </Table>
      ) : clusters.isSuccess ? (
        <p className="text-sm">No clusters registered.</p>
      ) : null}
      {clusters.hasNextPage ? (
        <Button className="mt-3" onClick={() => void clusters.fetchNextPage()} disabled={clusters.isFetchingNextPage}>
          {clusters.isFetchingNextPage ? "Loading…" : "More clusters"}
        </Button>
      ) : null}
      {editing && rows.some((c) => c.id === editing) ? (
        <EditCluster
          key={editing}
          cluster={rows.find((c) => c.id === editing)!}
          onClose={() => setEditing(undefined)}
        />
      ) : null}
      <RegisterCluster
        projectId={projectId}
        open={creating}
        onOpenChange={setCreating}
        onCreated={(token) => setSecret({ title: "Your cluster's tunnel token", token })}
      />
      <SecretDialog
        title={secret?.title ?? ""}
        label="Tunnel token"
        secret={secret?.token}
        description="Give it to the relay in the cluster (TUNNEL_TOKEN). This is the only time it is shown."
        onClose={() => setSecret(undefined)}
      />
    </Section>
  );
}

function RegisterCluster({
  projectId,
  open,
  onOpenChange,
  onCreated,
}: {
  projectId: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onCreated: (token: string) => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useMutation({
    mutationFn: () =>
      call("createCluster", {
        path: { projectId },
        body: { name, ...(description ? { description } : {}) },
      }),
    onSuccess: (cluster) => {
      void queryClient.invalidateQueries({ queryKey: ["clusters", projectId] });
      setName("");
      setDescription("");
      create.reset();
      onOpenChange(false);
      onCreated(cluster.tunnelToken);
    },
  });
  const fieldError = fieldErrorsOf(create.error);
  return (
    <FormDialog
      open={open}
      onOpenChange={onOpenChange}
      title="Register a cluster"
      submission={create}
      onSubmit={() => create.mutate()}
      submitLabel="Register"
      pendingLabel="Registering…"
      noValidate
      fieldErrorsBeside
    >
      <NameFields name={[name, setName]} description={[description, setDescription]} fieldError={fieldError} />
    </FormDialog>
  );
}
