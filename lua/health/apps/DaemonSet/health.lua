-- DaemonSet, judged as Argo CD judges it (after kubectl rollout status).
-- kstatus waits until every node runs the current pod template. With
-- updateStrategy OnDelete that never happens on its own (a pod is replaced
-- only when someone deletes it), so an OnDelete DaemonSet is Healthy as
-- soon as the controller has observed its spec, whatever its pods run and
-- however many are available.
hs = {}
local status = obj.status or {}
local generation = obj.metadata.generation or 0
local desired = status.desiredNumberScheduled or 0
local available = status.numberAvailable or 0
local updated = status.updatedNumberScheduled or 0
local strategy = obj.spec.updateStrategy or {}
local onDelete = strategy.type == "OnDelete"

if (status.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation
elseif not onDelete and updated < desired then
  hs.status = "Progressing"
  hs.message = string.format("Waiting for the rollout to finish: %d of %d pods updated", updated, desired)
elseif not onDelete and available < desired then
  hs.status = "Progressing"
  hs.message = string.format("Waiting for pods to become available: %d of %d", available, desired)
else
  hs.status = "Healthy"
  hs.message = string.format("%d of %d pods available", available, desired)
  if onDelete and updated < desired then
    hs.message = hs.message .. string.format("; %d run an older template until deleted (updateStrategy OnDelete)", desired - updated)
  end
end
return hs
