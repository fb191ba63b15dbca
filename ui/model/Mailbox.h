// Mailbox.h — how a worker thread (a sweep's training thread, an ablation) hands values to the
// GUI thread. The worker posts a call carrying copies of its values; the GUI thread runs the
// calls in order, a few tens of milliseconds later, from a timer that the owner starts while a
// worker may post. The queue is guarded by a std::mutex, so the handoff is ordered in a way that
// ThreadSanitizer can check (Qt's queued events are ordered by Qt's own futex mutex, which it
// cannot see), and a burst of progress reaches the window as one batch, not as one event each.
//
// The mailbox is a child of its owner: once the owner is gone no call runs, and a worker that
// still posts (it holds the Letters through a shared_ptr) posts into a closed box.
#pragma once

#include <QObject>
#include <QTimer>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace headlab::ui {

class Mailbox : public QObject {
public:
    // The worker's side: post() may be called from any thread.
    class Letters {
    public:
        void post(std::function<void()> call);

    private:
        friend class Mailbox;
        std::mutex m_mutex;
        std::deque<std::function<void()>> m_calls;
        bool m_closed = false;
    };

    explicit Mailbox(QObject *owner, int intervalMs = 30);
    ~Mailbox() override;

    std::shared_ptr<Letters> letters() const { return m_letters; }
    // GUI thread: run the posted calls from now on, every interval, until stopped.
    void open();
    // GUI thread: runs what is posted by now and stops the timer (call it from the last call).
    void stopAfterThis();
    // GUI thread: runs every call posted so far, in order.
    void deliver();

private:
    std::shared_ptr<Letters> m_letters = std::make_shared<Letters>();
    QTimer m_timer;
};

} // namespace headlab::ui
