// SPDX-License-Identifier: Apache-2.0
/* The top-level keys a settings file may hold (policy/settings_keys.h). */
#include "policy/settings_keys.h"

#include <string.h>

#include "util/strv.h"

/* The top-level keys cordon reads, then those of the harness settings files it shares
 * (README, "Settings file"): pi's settings.json (its SettingsManager's keys, current and
 * migrated ones) and Claude Code's settings.json (its documented keys).  Any other
 * top-level key is most likely a typo, and one of "sandbox" silently drops every rule in
 * it: it is warned about, or refused under strictSettings. */
static const char *const top_keys[] = {
    "sandbox", "orchestration",
    /* pi */
    "lastChangelogVersion", "defaultProvider", "defaultModel", "defaultThinkingLevel", "modelThinkingLevels",
    "transport", "steeringMode", "followUpMode", "queueMode", "websockets", "theme", "compaction", "branchSummary",
    "retry", "hideThinkingBlock", "showCacheMissNotices", "externalEditor", "shellPath", "quietStartup",
    "defaultProjectTrust", "shellCommandPrefix", "npmCommand", "collapseChangelog", "enableInstallTelemetry",
    "enableAnalytics", "trackingId", "packages", "extensions", "skills", "prompts", "themes", "enableSkillCommands",
    "terminal", "images", "enabledModels", "defaultTools", "doubleEscapeAction", "treeFilterMode", "thinkingBudgets",
    "editorPaddingX", "outputPad", "autocompleteMaxVisible", "showHardwareCursor", "markdown", "warnings", "sessionDir",
    "httpProxy", "httpIdleTimeoutMs", "websocketConnectTimeoutMs", "toolTimeoutMs", "tuiMode", "fullscreenExitOutput",
    "fullscreenScrollbar", "fullscreenCopyOnSelect", "hooks", "customTools",
    /* Claude Code */
    "$schema", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "cleanupPeriodDays", "companyAnnouncements",
    "env", "includeCoAuthoredBy", "includeGitInstructions", "attribution", "permissions", "disableAllHooks",
    "allowManagedHooksOnly", "allowManagedPermissionRulesOnly", "model", "availableModels", "statusLine", "outputStyle",
    "forceLoginMethod", "forceLoginOrgUUID", "enableAllProjectMcpServers", "enabledMcpjsonServers",
    "disabledMcpjsonServers", "allowedMcpServers", "deniedMcpServers", "mcpServers", "otelHeadersHelper",
    "spinnerTipsEnabled", "spinnerTipsOverride", "spinnerVerbs", "alwaysThinkingEnabled", "enabledPlugins",
    "extraKnownMarketplaces", "strictKnownMarketplaces", "language", "respectGitignore", "fileSuggestion",
    "plansDirectory", "showTurnDuration", "terminalProgressBarEnabled", "autoUpdatesChannel", "prefersReducedMotion",
    "teammateMode", "feedbackSurveyRate", "verbose", "autoCompactEnabled", "preferredNotifChannel", "autoUpdates"};

bool settings_is_top_key(const char *key)
{
    for (size_t i = 0; i < sizeof top_keys / sizeof *top_keys; i++)
        if (strcmp(key, top_keys[i]) == 0)
            return true;
    return false;
}

const char *settings_closest_top_key(const char *key)
{
    return closest_word(key, top_keys, sizeof top_keys / sizeof *top_keys);
}
