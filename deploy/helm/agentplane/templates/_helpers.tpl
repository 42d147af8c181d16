{{/*
The prefix of every object's name: 51 characters at most, so that `<prefix>-connections`, the
longest Service name, stays within the 63 of a DNS label.
*/}}
{{- define "agentplane.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 51 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 51 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "agentplane.labels" -}}
app.kubernetes.io/name: agentplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "agentplane.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "agentplane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "agentplane.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The ServiceAccount sandbox-svc alone runs as: the sandbox driver's Role (exec into every sandbox,
every sandbox's Secret) is bound to it, never to the account the other services run as.
*/}}
{{- define "agentplane.sandboxDriverServiceAccountName" -}}
{{- $shared := include "agentplane.serviceAccountName" . -}}
{{- $created := ternary (printf "%s-sandbox-driver" (include "agentplane.fullname" .)) "" .Values.serviceAccount.create -}}
{{- $name := .Values.serviceAccount.sandboxDriverName | default $created -}}
{{- if not $name -}}
{{- fail "serviceAccount.sandboxDriverName: with serviceAccount.create=false, name the ServiceAccount sandbox-svc runs as (the sandbox driver's permissions are bound to it)" -}}
{{- end -}}
{{- if eq $name $shared -}}
{{- fail (printf "serviceAccount.sandboxDriverName: %s is the account every service runs as; the sandbox driver's permissions (exec into sandboxes, their Secrets) go to an account of sandbox-svc's own" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* The Secret holding the platform's keys. */}}
{{- define "agentplane.keysSecret" -}}
{{- default (printf "%s-keys" (include "agentplane.fullname" .)) .Values.keys.existingSecret -}}
{{- end -}}

{{- define "agentplane.postgresSecret" -}}
{{- if .Values.postgres.dev.enabled -}}{{ include "agentplane.fullname" . }}-postgres{{- else -}}{{ .Values.postgres.existingSecret }}{{- end -}}
{{- end -}}

{{- define "agentplane.redisSecret" -}}
{{- if .Values.redis.dev.enabled -}}{{ include "agentplane.fullname" . }}-redis{{- else -}}{{ .Values.redis.existingSecret }}{{- end -}}
{{- end -}}

{{/* A service's settings: the shared defaults with its own overrides merged over them. */}}
{{- define "agentplane.serviceValues" -}}
{{- $root := index . 0 -}}
{{- $svc := index . 1 -}}
{{- toYaml (mergeOverwrite (deepCopy $root.Values.defaults) (deepCopy $svc)) -}}
{{- end -}}

{{/*
Environment every service gets (arguments: root, the service's name): where the others listen, the
stores, the keys. The egress proxy, the one component that talks to the internet for sandboxes,
gets the key of sandboxes' proxy credentials instead of the platform's AGENTPLANE_SECRET_KEY;
sandbox-svc, which issues those credentials, gets both (decision 0052). It signs with an identity
key of its own instead of the shared INTERNAL_IDENTITY_PRIVATE_KEY, whose public half governance
and sandbox-svc get to accept it on its own calls only (decision 0062), and holds no database or
bus credential: sandbox-svc answers what it needs of sandboxes (decision 0065).
*/}}
{{- define "agentplane.commonEnv" -}}
{{- $root := index . 0 -}}
{{- $for := index . 1 -}}
{{- $full := include "agentplane.fullname" $root -}}
{{- range $name, $svc := $root.Values.services }}
{{- if and $svc.enabled (ne $name "gateway") (ne $name "runtime") (ne $name "egress") }}
- name: {{ upper $name }}_URL
  value: {{ printf "http://%s-%s:%v" $full $name $svc.port | quote }}
{{- end }}
{{- end }}
{{- if ne $for "egress" }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.postgresSecret" $root }}
      key: {{ if $root.Values.postgres.dev.enabled }}url{{ else }}{{ $root.Values.postgres.existingSecretKey }}{{ end }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.redisSecret" $root }}
      key: {{ if $root.Values.redis.dev.enabled }}url{{ else }}{{ $root.Values.redis.existingSecretKey }}{{ end }}
{{- end }}
{{- if eq $for "egress" }}
- name: EGRESS_IDENTITY_PRIVATE_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.keysSecret" $root }}
      key: EGRESS_IDENTITY_PRIVATE_KEY
{{- else }}
- name: INTERNAL_IDENTITY_PRIVATE_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.keysSecret" $root }}
      key: INTERNAL_IDENTITY_PRIVATE_KEY
{{- end }}
{{- if and (or (eq $for "governance") (eq $for "sandbox")) $root.Values.services.egress.enabled }}
- name: EGRESS_IDENTITY_PUBLIC_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.keysSecret" $root }}
      key: EGRESS_IDENTITY_PUBLIC_KEY
      # In a keys.existingSecret made without it, governance and sandbox-svc start; the egress proxy does not.
      optional: true
{{- end }}
{{- if ne $for "egress" }}
- name: AGENTPLANE_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.keysSecret" $root }}
      key: AGENTPLANE_SECRET_KEY
{{- end }}
{{- if or (eq $for "egress") (and (eq $for "sandbox") $root.Values.services.egress.enabled) }}
- name: SANDBOX_EGRESS_CREDENTIAL_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "agentplane.keysSecret" $root }}
      key: SANDBOX_EGRESS_CREDENTIAL_KEY
      {{- if eq $for "sandbox" }}
      # In a keys.existingSecret made without it, sandbox-svc derives it from AGENTPLANE_SECRET_KEY.
      optional: true
      {{- end }}
{{- end }}
{{- end -}}

{{/* Whether a service is rendered: when enabled (arguments: root, name, service values). */}}
{{- define "agentplane.serviceRendered" -}}
{{- $svc := index . 2 -}}
{{- if $svc.enabled -}}true{{- end -}}
{{- end -}}

{{/*
Refuses a release where a rendered service would lack a service it cannot start without (its
required `*_URL`): such a Pod would only crash-loop.
*/}}
{{- define "agentplane.requireServices" -}}
{{- $root := . -}}
{{- $needs := dict
  "gateway" (list "tenancy")
  "sandbox" (list "tenancy")
  "egress" (list "governance" "sandbox")
  "audit" (list "tenancy")
  "governance" (list "tenancy")
  "connections" (list "tenancy")
  "inference" (list "tenancy" "audit") -}}
{{- range $name, $svc := .Values.services }}
{{- if include "agentplane.serviceRendered" (list $root $name $svc) }}
{{- range $needed := (get $needs $name | default list) }}
{{- if not (index $root.Values.services $needed).enabled }}
{{- fail (printf "services.%s.enabled=false: %s cannot start without it (%s_URL)" $needed $name (upper $needed)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Refuses a secret in an extraEnv (arguments: where, the map): extraEnv is plain text in the release
(the ConfigMap, the Deployments' env), readable by anyone who may read those. A secret goes in a
Secret named by the service's existingSecret; a key being rotated out (`*_PREVIOUS`, e.g.
AGENTPLANE_SECRET_KEY_PREVIOUS) as well. TUNNEL_TOKEN_SECRET(_KEY) name a Secret, hold none.
*/}}
{{- define "agentplane.refuseSecretEnv" -}}
{{- $where := index . 0 -}}
{{- range $name, $_ := index . 1 -}}
{{- if and (regexMatch "^(DATABASE_URL|REDIS_URL)$|(TOKEN|SECRET|PASSWORD|API_KEY|PRIVATE_KEY|SECRET_KEY|SECRET_ACCESS_KEY|CREDENTIAL_KEY)(_PREVIOUS)?$" $name) (not (regexMatch "^TUNNEL_TOKEN_SECRET(_KEY)?$" $name)) -}}
{{- fail (printf "%s.%s is a secret: extraEnv is plain text in the release; put it in a Secret and name that Secret in the existingSecret of the service that needs it (services.<name>.existingSecret)" $where $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Egress rules of a Pod that connects where outside input tells it: any Pod (DNS, the platform's
services) and the internet, never a link-local address, where the cloud's metadata service hands
out the node's credentials.
*/}}
{{- define "agentplane.egressNoLinkLocal" -}}
- to:
    - namespaceSelector: {}
- to:
    - ipBlock: { cidr: 0.0.0.0/0, except: ["169.254.0.0/16"] }
    - ipBlock: { cidr: "::/0", except: ["fe80::/10", "fd00:ec2::254/128"] }
{{- end -}}
