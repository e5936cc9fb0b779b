-- External Secrets Operator ExternalSecret.
-- Healthy when the target Secret is synced (condition Ready) from the
-- current spec, Degraded when syncing failed. status.syncedResourceVersion
-- is "<generation>-<hash>" of the last successful sync, which tells whether
-- that sync used the current spec.
hs = {}
local ready = getCondition(obj, "Ready")
local generation = obj.metadata.generation or 0
local synced = (obj.status or {}).syncedResourceVersion
local syncedGeneration = nil
if synced ~= nil then
  syncedGeneration = tonumber(string.match(synced, "^(%d+)%-"))
end

if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the secret to be synced"
elseif ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.message or ready.reason or "Secret could not be synced"
elseif ready.status == "True" and syncedGeneration ~= nil and syncedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the secret to be synced from generation " .. generation
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "Secret synced"
else
  hs.status = "Progressing"
  hs.message = ready.message or "Waiting for the secret to be synced"
end
return hs
