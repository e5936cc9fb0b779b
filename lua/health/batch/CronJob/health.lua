-- CronJob, judged as Argo CD judges it. A CronJob's status cannot tell a
-- job that failed from one that has not finished yet, nor a missed
-- schedule from a quiet one, so it is Healthy in every doubtful case and
-- Degraded only when the last scheduled job is known to have failed: no
-- job running, and the last success older than the last schedule.
-- Suspended CronJobs are Healthy too (Argo CD does so until
-- argoproj/argo-cd#24428 is resolved; a suspended CronJob should not hold
-- up a rollout). Timestamps are RFC 3339 in UTC, so comparing them as
-- strings orders them in time.
local function result(code, message)
  return {status = code, message = message}
end

local status = obj.status
if obj.spec.suspend == true then
  return result("Healthy", "CronJob is Suspended")
elseif status == nil then
  return result("Progressing", "Waiting for CronJob")
end

local scheduled, succeeded = status.lastScheduleTime, status.lastSuccessfulTime
if scheduled == nil then
  return result("Healthy", "CronJob has not been scheduled yet")
elseif succeeded == nil then
  return result("Healthy", "The CronJob never completed successfully. It may not be healthy")
elseif #(status.active or {}) > 0 then
  return result("Healthy", "The job is running. Its last execution may not have been successful")
elseif succeeded < scheduled then
  return result("Degraded", "CronJob has not completed its last execution successfully")
end
return result("Healthy", "CronJob has completed its last execution successfully")
