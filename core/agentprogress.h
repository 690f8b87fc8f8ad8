// Where one agent call stands, for the live line of kevolve-cli and the agent panels: which
// attempt, how many tokens have streamed, how long it has run, and what it waits for. Emitted by
// the LLM agents as their calls progress and relayed by the Engine with the candidate's version.
#pragma once

#include <QMetaType>
#include <QString>

namespace kev {

struct AgentProgress {
    enum class State {
        Sending,   // connecting and sending the request
        Waiting,   // sent; no token yet (queueing, prefill, loading the model)
        Streaming, // tokens arriving
        Retrying,  // the attempt failed; waiting waitMs (back-off or Retry-After) before the next
        Done,      // the reply is complete
        Failed,    // no further attempt
    };

    QString role;  // "planner", "coder" or "reviewer"
    QString model; // the model asked (a fallback model once the primary one failed)
    int version = 0;
    State state = State::Sending;
    int attempt = 1;
    int maxAttempts = 1;
    qint64 tokens = 0;           // completion tokens streamed so far
    bool tokensEstimated = true; // counted as characters / 4 until the server reports usage
    qint64 elapsedMs = 0;        // since the call started, retries included
    qint64 waitMs = 0;           // Retrying: how long until the next attempt
    bool retryAfter = false;     // Retrying: the server asked for the wait (Retry-After)
    QString detail;              // Retrying/Failed: what went wrong

    // "coder qwen2.5-coder: streaming, ~1234 tokens, 12.3 s, attempt 1 of 4"
    QString line() const;
    static QString stateName(State state);
};

} // namespace kev

Q_DECLARE_METATYPE(kev::AgentProgress)
