-- HorizontalPodAutoscaler, judged as Argo CD judges it. autoscaling/v1
-- keeps the conditions as JSON in an annotation, later versions in
-- status.conditions. Degraded when a condition says the autoscaler cannot
-- read its target or its metrics (the reasons below, whatever the
-- condition's status); Healthy when AbleToScale or ScalingLimited is True
-- (a disabled autoscaler, ScalingDisabled, is Healthy too); otherwise
-- Progressing. kstatus alone would call every autoscaler current.
local failures = {
  AbleToScale = {FailedGetScale = true, FailedUpdateScale = true},
  ScalingActive = {
    FailedGetResourceMetric = true, FailedGetObjectMetric = true,
    FailedGetPodsMetric = true, FailedGetExternalMetric = true,
    FailedComputeMetricsReplicas = true, InvalidSelector = true,
  },
}
local healthyWhenTrue = {AbleToScale = true, ScalingLimited = true}

local function conditions()
  if obj.apiVersion ~= "autoscaling/v1" then
    return (obj.status or {}).conditions or {}
  end
  local annotation = getAnnotation(obj, "autoscaling.alpha.kubernetes.io/conditions")
  if annotation == nil then
    return {}
  end
  return json.decode(annotation)
end

local list = conditions()
for _, c in ipairs(list) do
  if (failures[c.type] or {})[c.reason or ""] then
    return {status = "Degraded", message = c.message}
  end
end
for _, c in ipairs(list) do
  if healthyWhenTrue[c.type] and c.status == "True" then
    local status = obj.status or {}
    local counts = string.format("%d replicas, %d desired", status.currentReplicas or 0, status.desiredReplicas or 0)
    return {status = "Healthy", message = c.message or counts}
  end
end
return {status = "Progressing", message = "Waiting to Autoscale"}
