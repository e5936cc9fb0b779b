-- HorizontalPodAutoscaler.
-- kstatus reports every autoscaler as current, including one that cannot
-- read its metrics (no metrics server, a missing custom metric) and so never
-- scales. autoscaling/v2 keeps the conditions in status; autoscaling/v1
-- keeps them as JSON in an annotation.
hs = {}
local status = obj.status or {}
local conditions = status.conditions
local annotation = getAnnotation(obj, "autoscaling.alpha.kubernetes.io/conditions")
if conditions == nil and annotation ~= nil then
  conditions = json.decode(annotation)
end
local view = {status = {conditions = conditions}}
local able = getCondition(view, "AbleToScale")
local active = getCondition(view, "ScalingActive")

if able ~= nil and able.status == "False" then
  hs.status = "Degraded"
  hs.message = "Cannot scale: " .. (able.message or able.reason or "")
elseif active ~= nil and active.status == "False" and active.reason == "ScalingDisabled" then
  hs.status = "Suspended"
  hs.message = active.message or "Scaling is disabled"
elseif active ~= nil and active.status == "False" then
  hs.status = "Degraded"
  hs.message = "Scaling is not active: " .. (active.message or active.reason or "")
elseif able == nil or active == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the autoscaler to read its metrics"
else
  hs.status = "Healthy"
  hs.message = string.format("%d replicas, %d desired", status.currentReplicas or 0, status.desiredReplicas or 0)
end
return hs
