-- StatefulSet, judged as Argo CD judges it (after kubectl rollout status):
-- Progressing until the controller has observed the current spec and
-- every replica is ready. Then, with a rollingUpdate block (the API server
-- always writes one for RollingUpdate, partition 0 by default), the
-- rollout is done when the pods at or above the partition ordinal are
-- updated; with OnDelete, pods are replaced only when deleted, so ready
-- pods suffice, whatever template they run; otherwise the update revision
-- must have become the current one.
local status = obj.status or {}
local spec = obj.spec
local observed = status.observedGeneration or 0
local ready = status.readyReplicas or 0
local updated = status.updatedReplicas or 0
local strategy = spec.updateStrategy or {}

local function result(code, message)
  return {status = code, message = message}
end

if observed == 0 or observed < (obj.metadata.generation or 0) then
  return result("Progressing", "Waiting for the controller to observe generation " .. (obj.metadata.generation or 0))
end
if spec.replicas ~= nil and ready < spec.replicas then
  return result("Progressing", string.format("Waiting for pods to be ready: %d of %d", ready, spec.replicas))
end
if strategy.type == "RollingUpdate" and strategy.rollingUpdate ~= nil then
  local partition = strategy.rollingUpdate.partition
  if spec.replicas ~= nil and partition ~= nil and updated < spec.replicas - partition then
    return result("Progressing", string.format("Waiting for the rollout to finish: %d of %d pods updated", updated, spec.replicas - partition))
  end
  local message = string.format("%d of %d pods ready", ready, spec.replicas or ready)
  if (partition or 0) > 0 then
    message = message .. string.format("; pods below ordinal %d keep the older template (partition)", partition)
  end
  return result("Healthy", message)
end
if strategy.type == "OnDelete" then
  local message = string.format("%d pods ready", ready)
  if updated < ready then
    message = message .. string.format("; %d run an older template until deleted (updateStrategy OnDelete)", ready - updated)
  end
  return result("Healthy", message)
end
if status.updateRevision ~= status.currentRevision then
  return result("Progressing", string.format("Waiting for the rollout to finish: %d pods at revision %s", updated, status.updateRevision or "?"))
end
return result("Healthy", string.format("%d pods ready at revision %s", ready, status.currentRevision or "?"))
