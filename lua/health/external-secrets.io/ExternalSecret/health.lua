-- External Secrets Operator ExternalSecret, judged as Argo CD judges it:
-- the first Ready condition decides (True: Healthy, False: Degraded, with
-- its message); without one, Progressing until the operator reports.
-- Argo CD does not compare status.syncedResourceVersion with the
-- generation, so an ExternalSecret whose last sync used an older spec is
-- Healthy while Ready is True.
for _, c in ipairs((obj.status or {}).conditions or {}) do
  if c.type == "Ready" and c.status == "True" then
    return {status = "Healthy", message = c.message}
  elseif c.type == "Ready" and c.status == "False" then
    return {status = "Degraded", message = c.message}
  end
end
return {status = "Progressing", message = "Waiting for ExternalSecret"}
