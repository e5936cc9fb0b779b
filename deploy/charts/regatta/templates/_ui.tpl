{{- /*
regatta.uiArgs: the web UI's flags of `regatta run` (ui.*): its listen
address, who may read it (docs/operations.md, "Who may read the web UI").
*/ -}}
{{- define "regatta.uiArgs" -}}
{{- $ui := .Values.ui -}}
- --ui-addr=:{{ $ui.port }}
- --ui-auth={{ $ui.auth }}
- {{ printf "--ui-fleet-name=%s" $ui.fleetName | quote }}
{{- if eq $ui.auth "oidc" }}
- {{ printf "--ui-oidc-issuer=%s" $ui.oidc.issuer | quote }}
- {{ printf "--ui-oidc-client-id=%s" $ui.oidc.clientID | quote }}
- {{ printf "--ui-oidc-redirect-url=%s" (include "regatta.uiRedirectURL" .) | quote }}
- {{ printf "--ui-oidc-user-claim=%s" $ui.oidc.userClaim | quote }}
- {{ printf "--ui-oidc-groups-claim=%s" $ui.oidc.groupsClaim | quote }}
{{- with $ui.oidc.scopes }}
- {{ printf "--ui-oidc-scopes=%s" (join "," .) | quote }}
{{- end }}
{{- with $ui.oidc.fleetGroups }}
- {{ printf "--ui-oidc-fleet-groups=%s" (join "," .) | quote }}
{{- end }}
{{- range $tenant, $groups := $ui.oidc.tenantGroups }}
{{- range $groups }}
- {{ printf "--ui-oidc-tenant-groups=%s=%s" $tenant . | quote }}
{{- end }}
{{- end }}
{{- with $ui.oidc.clientSecret.secretName }}
- --ui-oidc-client-secret-file=/etc/regatta/ui-oidc/{{ $ui.oidc.clientSecret.key }}
{{- end }}
- --ui-cookie-key-file=/etc/regatta/ui-cookie/{{ $ui.oidc.cookieKey.key }}
{{- end }}
{{- end -}}

{{/* regatta.validateUI: the web UI's values (ui.*). */}}
{{- define "regatta.validateUI" -}}
{{- $ui := .Values.ui -}}
{{- if and $ui.ingress.enabled (not $ui.enabled) -}}
{{- fail "ui.ingress.enabled needs ui.enabled: the Ingress routes to the UI's Service" -}}
{{- end -}}
{{- if and $ui.ingress.enabled (not $ui.ingress.host) -}}
{{- fail "ui.ingress.host is required with ui.ingress.enabled" -}}
{{- end -}}
{{- if and $ui.enabled .Values.agent.enabled -}}
{{- fail "ui.enabled serves the web UI from the central daemon: set it on the fleet's regatta, not on an agent (agent.enabled)" -}}
{{- end -}}
{{- if and $ui.enabled (eq $ui.auth "oidc") -}}
{{- if not $ui.oidc.issuer -}}
{{- fail "ui.oidc.issuer is required with ui.auth oidc: the OpenID provider's issuer URL" -}}
{{- end -}}
{{- if not $ui.oidc.clientID -}}
{{- fail "ui.oidc.clientID is required with ui.auth oidc: the UI's OAuth2 client ID at the provider" -}}
{{- end -}}
{{- if not (include "regatta.uiRedirectURL" .) -}}
{{- fail "ui.oidc.redirectURL is required with ui.auth oidc unless ui.ingress.host is set: https://<UI host>/-/callback" -}}
{{- end -}}
{{- if not $ui.oidc.cookieKey.secretName -}}
{{- fail "ui.oidc.cookieKey.secretName is required with ui.auth oidc: a Secret holding the key (at least 32 bytes) that signs the session cookies, the same for every replica" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* regatta.uiRedirectURL: ui.oidc.redirectURL, else the Ingress host's callback. */}}
{{- define "regatta.uiRedirectURL" -}}
{{- if .Values.ui.oidc.redirectURL -}}
{{- .Values.ui.oidc.redirectURL -}}
{{- else if .Values.ui.ingress.host -}}
{{- printf "https://%s/-/callback" .Values.ui.ingress.host -}}
{{- end -}}
{{- end -}}
