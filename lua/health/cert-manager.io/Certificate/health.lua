-- cert-manager Certificate, judged as Argo CD judges it: Progressing while
-- any Issuing condition is True (a new certificate is being requested,
-- whatever Ready says), else the first Ready condition decides (True:
-- Healthy, False: Degraded, with its message), else Progressing until
-- cert-manager reports. A failed renewal of a certificate that is still
-- valid stays Healthy: Ready is True until the old one expires.
local conditions = (obj.status or {}).conditions or {}

for _, c in ipairs(conditions) do
  if c.type == "Issuing" and c.status == "True" then
    return {status = "Progressing", message = c.message}
  end
end
for _, c in ipairs(conditions) do
  if c.type == "Ready" and c.status == "True" then
    return {status = "Healthy", message = c.message}
  elseif c.type == "Ready" and c.status == "False" then
    return {status = "Degraded", message = c.message}
  end
end
return {status = "Progressing", message = "Waiting for certificate"}
