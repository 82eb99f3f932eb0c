ALTER TABLE `batches` ADD `event_queued_at` text;--> statement-breakpoint
-- Batches completed before this column existed are taken as sent: the cron resends only what
-- a failed send leaves from now on.
UPDATE `batches` SET `event_queued_at` = `completed_at` WHERE `state` = 'completed';
