-- StatefulSet.
-- With updateStrategy OnDelete, pods are replaced only when deleted, so a
-- StatefulSet is Healthy once all its pods are ready, whatever template they
-- run. With RollingUpdate and a partition, only the pods at or above the
-- partition ordinal are updated: the rollout is done when those are.
hs = {}
local status = obj.status or {}
local generation = obj.metadata.generation or 0
local replicas = obj.spec.replicas or 1
local ready = status.readyReplicas or 0
local updated = status.updatedReplicas or 0
local strategy = obj.spec.updateStrategy or {}
local onDelete = strategy.type == "OnDelete"
local partition = 0
if strategy.rollingUpdate ~= nil and strategy.rollingUpdate.partition ~= nil then
  partition = math.min(strategy.rollingUpdate.partition, replicas)
end

if (status.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation
elseif not onDelete and updated < replicas - partition then
  hs.status = "Progressing"
  hs.message = string.format("Waiting for the rollout to finish: %d of %d pods updated", updated, replicas - partition)
elseif ready < replicas then
  hs.status = "Progressing"
  hs.message = string.format("Waiting for pods to be ready: %d of %d", ready, replicas)
else
  hs.status = "Healthy"
  hs.message = string.format("%d of %d pods ready", ready, replicas)
  if onDelete and updated < replicas then
    hs.message = hs.message .. string.format("; %d run an older template until deleted (updateStrategy OnDelete)", replicas - updated)
  elseif partition > 0 then
    hs.message = hs.message .. string.format("; pods below ordinal %d keep the older template (partition)", partition)
  end
end
return hs
