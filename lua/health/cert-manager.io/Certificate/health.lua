-- cert-manager Certificate.
-- Healthy once the current certificate is issued (Ready), Progressing while
-- cert-manager is still issuing it or has not seen the latest spec, Degraded
-- when issuance failed and there is no valid certificate to fall back on.
hs = {}
local ready = getCondition(obj, "Ready")
local issuing = getCondition(obj, "Issuing")
local generation = obj.metadata.generation or 0
local failed = issuing ~= nil and issuing.status == "False" and issuing.reason == "Failed"

if ready ~= nil and ready.observedGeneration ~= nil and ready.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for cert-manager to observe generation " .. generation
elseif issuing ~= nil and issuing.status == "True" then
  hs.status = "Progressing"
  hs.message = "Issuing: " .. (issuing.message or "a new certificate is being requested")
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "Certificate is up to date"
  if failed then
    hs.message = hs.message .. "; renewal failed: " .. (issuing.message or "")
  end
elseif failed then
  hs.status = "Degraded"
  hs.message = "Issuing failed: " .. (issuing.message or "")
elseif ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.message or ready.reason or "Certificate is not ready"
else
  hs.status = "Progressing"
  hs.message = "Waiting for the certificate to be issued"
end
return hs
