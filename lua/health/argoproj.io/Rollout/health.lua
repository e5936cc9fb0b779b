-- Argo Rollouts Rollout.
-- The rollouts controller sums a rollout up in status.phase (Healthy,
-- Progressing, Degraded, Paused); this script trusts it once the controller
-- has observed the current spec. Paused rollouts (a canary pause step or
-- spec.paused) are Suspended, aborted ones Degraded.
hs = {}
local status = obj.status or {}
local generation = obj.metadata.generation or 0
-- observedGeneration is a string in the Rollout API.
local observed = tonumber(status.observedGeneration) or 0

if observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the rollouts controller to observe generation " .. generation
elseif status.abort == true then
  hs.status = "Degraded"
  hs.message = "Rollout aborted: " .. (status.message or "no reason given")
elseif obj.spec.paused == true or status.phase == "Paused" then
  hs.status = "Suspended"
  hs.message = status.message or "Rollout is paused"
elseif status.phase == "Healthy" or status.phase == "Progressing" or status.phase == "Degraded" then
  hs.status = status.phase
  hs.message = status.message or ""
else
  hs.status = "Progressing"
  hs.message = "Waiting for the rollout to report its phase"
end
return hs
