-- Argo Rollouts Rollout, judged as Argo CD judges it:
--  1. Progressing until the controller has observed the current spec. A
--     numeric status.observedGeneration must equal metadata.generation;
--     rollouts before v0.10 wrote a pod-template hash there instead (not a
--     number, or a number above the generation), which counts as observed.
--     A rollout with spec.workloadRef must also have observed the
--     workload's generation (annotation rollout.argoproj.io/workload-generation
--     against status.workloadObservedGeneration).
--  2. From v1.0 the controller sums the rollout up in status.phase and
--     status.message: taken as they are, Paused becoming Suspended.
--  3. Older rollouts: an InvalidSpec condition, an aborted rollout or one
--     past its progress deadline is Degraded; pause conditions or
--     spec.paused are Suspended; then replica counts and, per strategy,
--     the active service (blue-green) or the stable ReplicaSet (canary)
--     decide between Progressing and Healthy.
local status = obj.status

local function observed()
  if status == nil then
    return false
  end
  local seen = tonumber(status.observedGeneration)
  local generation = obj.metadata.generation or 0
  if seen ~= nil and seen < generation then
    return false
  end
  local annotations = obj.metadata.annotations
  if obj.spec.workloadRef ~= nil and annotations ~= nil then
    local wanted = tonumber(annotations["rollout.argoproj.io/workload-generation"])
    return wanted == tonumber(status.workloadObservedGeneration)
  end
  return true
end

local function result(code, message)
  return {status = code, message = message or ""}
end

local function degradedCondition()
  for _, c in ipairs(status.conditions or {}) do
    local aborted = c.type == "Progressing" and (c.reason == "RolloutAborted" or c.reason == "ProgressDeadlineExceeded")
    if c.type == "InvalidSpec" or aborted then
      return c
    end
  end
  return nil
end

local function paused()
  return #(status.pauseConditions or {}) > 0 or obj.spec.paused == true
end

local function stableHash()
  if status.stableRS ~= nil then
    return status.stableRS
  end
  return (status.canary or {}).stableRS or ""
end

-- progress judges replicas and the strategy once the status is reconciled.
local function progress()
  local hash = status.currentPodHash
  local desired = obj.spec.replicas or 1
  local total = status.replicas or 0
  local updated = status.updatedReplicas or 0
  local available = status.availableReplicas or 0
  local strategy = obj.spec.strategy or {}
  local stable = stableHash()
  if updated < desired then
    return result("Progressing", "Waiting for roll out to finish: More replicas need to be updated")
  elseif available < updated then
    return result("Progressing", "Waiting for roll out to finish: updated replicas are still becoming available")
  elseif strategy.blueGreen ~= nil then
    if (status.blueGreen or {}).activeSelector ~= hash then
      return result("Progressing", "active service cutover pending")
    elseif stable ~= "" and stable ~= hash then
      return result("Progressing", "waiting for analysis to complete")
    end
  elseif strategy.canary ~= nil then
    if total > updated then
      return result("Progressing", "Waiting for roll out to finish: old replicas are pending termination")
    elseif stable ~= hash then
      return result("Progressing", "Waiting for rollout to finish steps")
    end
  end
  return result("Healthy", "")
end

if not observed() then
  return result("Progressing", "Waiting for rollout spec update to be observed")
end
if status.phase ~= nil then
  local code = status.phase
  if code == "Paused" then
    code = "Suspended"
  end
  return result(code, status.message)
end
local bad = degradedCondition()
if bad ~= nil then
  return result("Degraded", bad.message)
end
if paused() then
  return result("Suspended", "Rollout is paused")
end
if status.currentPodHash == nil then
  return result("Progressing", "Waiting for rollout to finish: status has not been reconciled.")
end
return progress()
