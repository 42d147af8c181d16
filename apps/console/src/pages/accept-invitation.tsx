import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { useLocation, useNavigate, useParams } from "react-router";
import { call, setCsrfToken } from "../api/client.ts";
import { restoreSession } from "../api/session.ts";
import { Button, ErrorNote, Loading, TextField, useDocumentTitle } from "../components/ui.tsx";
import { forgetLinkFragment, keepLinkFragment, keptLinkFragment, linkToken } from "../lib/invitation-link.ts";
import { ApiError } from "../lib/problem.ts";

const FRAME =
  "mx-auto mt-24 max-w-md rounded-lg border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-700 dark:bg-slate-900";

/**
 * Where an invitation's link opens. Signed in: accept as yourself. Otherwise, on an installation
 * without an identity provider, join by choosing a display name (the email is the invitation's);
 * with one, sign in there and come back here to accept.
 */
export default function AcceptInvitationPage() {
  const { invitationId } = useParams() as { invitationId: string };
  const location = useLocation();
  const navigate = useNavigate();
  // Back from the identity provider, the link's fragment kept in this tab is read, and put back
  // into the address, where a reload finds it again.
  const [kept] = useState(() => (location.hash ? "" : keptLinkFragment(invitationId)));
  useEffect(() => {
    if (!kept) return;
    forgetLinkFragment(invitationId);
    navigate({ hash: kept }, { replace: true });
  }, [invitationId, kept, navigate]);
  const token = linkToken(location.hash || kept);
  const preview = useQuery({
    queryKey: ["invitation-preview", invitationId],
    queryFn: () => call("previewInvitation", { path: { invitationId }, body: { token } }),
    enabled: token.length > 0,
    retry: false,
  });
  const session = useQuery({ queryKey: ["session"], queryFn: restoreSession, retry: false, staleTime: Infinity });
  useDocumentTitle(preview.data ? `Join ${preview.data.orgName}` : "Invitation");
  if (!token) {
    return (
      <main className={FRAME}>
        <h1 className="mb-4 text-xl font-semibold">Invitation</h1>
        <p role="alert">This link is incomplete: open the whole link you were sent.</p>
      </main>
    );
  }
  const inv = preview.data;
  return (
    <main className={FRAME}>
      <h1 className="mb-4 text-xl font-semibold">{inv ? `Join ${inv.orgName}` : "Invitation"}</h1>
      {preview.isPending ? <Loading what="the invitation" /> : null}
      <ErrorNote error={preview.error} />
      {inv ? (
        <>
          <p className="mb-4 text-sm">
            <strong>{inv.email}</strong> is invited as <strong>{inv.role}</strong>. The invitation expires{" "}
            {new Date(inv.expiresAt).toLocaleString()}.
          </p>
          {inv.status !== "pending" ? (
            <p role="alert">This invitation is {inv.status} and can no longer be accepted.</p>
          ) : session.data ? (
            <AcceptAsSignedIn invitationId={invitationId} token={token} />
          ) : session.isPending ? (
            <Loading what="your session" />
          ) : inv.signIn === "display-name" ? (
            <JoinWithName invitationId={invitationId} token={token} email={inv.email} />
          ) : (
            <p>
              <a
                className="font-medium"
                href={`/sign-in/oidc?next=${encodeURIComponent(location.pathname)}`}
                onClick={() => keepLinkFragment(invitationId, location.hash)}
              >
                Sign in with your identity provider
              </a>{" "}
              as {inv.email}, then accept here.
            </p>
          )}
        </>
      ) : null}
    </main>
  );
}

function AcceptAsSignedIn({ invitationId, token }: { invitationId: string; token: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const accept = useMutation({
    // The link's token proves the invitation is yours when no identity provider vouches for your email.
    mutationFn: () => call("acceptInvitation", { path: { invitationId }, body: { token } }),
    onSuccess: (joined) => {
      void queryClient.invalidateQueries({ queryKey: ["me"] });
      navigate(`/orgs/${joined.orgId}`, { replace: true });
    },
  });
  return (
    <>
      <p className="mb-3 text-sm">You are signed in; accepting joins your account to the organization.</p>
      <ErrorNote error={accept.error} />
      <Button variant="primary" disabled={accept.isPending} onClick={() => accept.mutate()}>
        {accept.isPending ? "Accepting…" : "Accept invitation"}
      </Button>
    </>
  );
}

function JoinWithName({ invitationId, token, email }: { invitationId: string; token: string; email: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [displayName, setDisplayName] = useState("");
  const join = useMutation({
    mutationFn: () => call("redeemInvitation", { path: { invitationId }, body: { token, displayName } }),
    onSuccess: (joined) => {
      setCsrfToken(joined.csrfToken);
      queryClient.clear();
      queryClient.setQueryData(["session"], { session: joined.session, csrfToken: joined.csrfToken });
      navigate(`/orgs/${joined.acceptance.orgId}`, { replace: true });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    join.mutate();
  };
  const fieldError = join.error instanceof ApiError ? join.error.fieldError("displayName") : undefined;
  return (
    <form onSubmit={submit}>
      <TextField label="Email" value={email} readOnly hint="From the invitation" />
      <TextField
        label="Display name"
        hint="How others in the organization see you"
        required
        maxLength={100}
        autoComplete="name"
        error={fieldError}
        value={displayName}
        onChange={(e) => setDisplayName(e.target.value)}
      />
      <ErrorNote error={fieldError ? undefined : join.error} />
      <Button type="submit" variant="primary" disabled={join.isPending || !displayName.trim()}>
        {join.isPending ? "Joining…" : "Join and sign in"}
      </Button>
      <p className="mt-3 text-xs text-slate-600 dark:text-slate-300">
        Afterwards, sign in with an API token you create, or a sign-in link an admin sends you.
      </p>
    </form>
  );
}
