"""mosquitto for the chaos runs (Tests/chaos/chaos.py, Tests/chaos/cluster.py): persistence on,
saved every second and at every change, no queue limit; started, waited for, stopped."""

import asyncio
import os
import signal


class BrokerDidNotListen(Exception):
    pass


class Broker:
    def __init__(self, work, port, listen="127.0.0.1"):
        """`listen` empty: every address of the machine (namespaces reach it through their veth)."""
        self.port = port
        self.config = os.path.join(work, "mosquitto.conf")
        os.makedirs(os.path.join(work, "broker"), exist_ok=True)
        with open(self.config, "w") as file:
            file.write(f"{f'listener {port} {listen}'.strip()}\nallow_anonymous true\npersistence true\n"
                       f"persistence_location {work}/broker/\nautosave_interval 1\nautosave_on_changes true\n"
                       "max_queued_messages 0\nmax_inflight_messages 0\n")  # fmt: skip
        self.process = None
        self.log = open(os.path.join(work, "mosquitto.log"), "a")

    async def start(self):
        self.process = await asyncio.create_subprocess_exec(
            "mosquitto", "-c", self.config, stdout=self.log, stderr=self.log)
        for _ in range(200):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.025)
        raise BrokerDidNotListen("mosquitto did not listen within 5 s")

    async def stop(self, hard=False):
        if self.process and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
            await self.process.wait()
