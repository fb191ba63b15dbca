// Mailbox.cpp — see Mailbox.h.
#include "ui/model/Mailbox.h"

namespace headlab::ui {

void Mailbox::Letters::post(std::function<void()> call)
{
    const std::lock_guard lock(m_mutex);
    if (!m_closed) m_calls.push_back(std::move(call));
}

Mailbox::Mailbox(QObject *owner, int intervalMs)
    : QObject(owner)
{
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &Mailbox::deliver);
}

Mailbox::~Mailbox()
{
    std::deque<std::function<void()>> dropped; // destroyed outside the lock
    const std::lock_guard lock(m_letters->m_mutex);
    m_letters->m_closed = true;
    dropped.swap(m_letters->m_calls);
}

void Mailbox::open()
{
    if (!m_timer.isActive()) m_timer.start();
}

void Mailbox::stopAfterThis()
{
    m_timer.stop();
}

void Mailbox::deliver()
{
    std::deque<std::function<void()>> calls;
    {
        const std::lock_guard lock(m_letters->m_mutex);
        calls.swap(m_letters->m_calls);
    }
    // A call may stop the timer, or post (from this thread) more: those run at the next tick, or
    // at the next deliver() of a caller that waits for them.
    for (auto &call : calls) call();
}

} // namespace headlab::ui
